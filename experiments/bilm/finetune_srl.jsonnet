// Fine-tune a biLM on the srl task's training text: CoNLL-2005's training sentences (WSJ), the CPU variant's subset.
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_srl.jsonnet \
//       -s runs/bilm_finetuned/srl --init-from gutenberg
// then use it: ELMO_WEIGHTS=runs/bilm_finetuned/srl/bilm (the srl sweep's elmo_finetuned variant).
(import '../lib/finetune.libsonnet')('experiments/srl.jsonnet', { ELMO_SIZE: 'cpu' })
