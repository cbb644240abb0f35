// Fine-tune a biLM on the ner task's training text: CoNLL-2003 eng.train (news).
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_ner.jsonnet \
//       -s runs/bilm_finetuned/ner --init-from gutenberg
// then use it: ELMO_WEIGHTS=runs/bilm_finetuned/ner/bilm (the ner sweep's elmo_finetuned variant).
(import '../lib/finetune.libsonnet')('experiments/ner.jsonnet', {})
