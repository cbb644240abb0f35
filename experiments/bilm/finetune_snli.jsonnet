// Fine-tune a biLM on the snli task's training text: SNLI's training premises and hypotheses (image captions), as the CPU variant reads them.
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_snli.jsonnet \
//       -s runs/bilm_finetuned/snli --init-from gutenberg
// then use it: ELMO_WEIGHTS=runs/bilm_finetuned/snli/bilm (the snli sweep's elmo_finetuned variant).
(import '../lib/finetune.libsonnet')('experiments/snli.jsonnet', { ELMO_SIZE: 'cpu' })
