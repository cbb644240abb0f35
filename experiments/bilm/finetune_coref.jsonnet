// Fine-tune a biLM on the coref task's training text: LitBank's 80 training excerpts (novels; documents of the train split only).
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_coref.jsonnet \
//       -s runs/bilm_finetuned/coref --init-from gutenberg
// then use it: ELMO_WEIGHTS=runs/bilm_finetuned/coref/bilm (the coref sweep's elmo_finetuned variant).
(import '../lib/finetune.libsonnet')('experiments/coref.jsonnet', { ELMO_SIZE: 'cpu' })
