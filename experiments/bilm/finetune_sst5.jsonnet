// Fine-tune a biLM on the sst5 task's training text: SST-5's training sentences (film reviews; each tree's sentence, not its phrases).
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_sst5.jsonnet \
//       -s runs/bilm_finetuned/sst5 --init-from gutenberg
// then use it: ELMO_WEIGHTS=runs/bilm_finetuned/sst5/bilm (the sst5 sweep's elmo_finetuned variant).
// SST's training reader yields every phrase of a tree; its evaluation reader the sentences.
(import '../lib/finetune.libsonnet')('experiments/sst5.jsonnet', { ELMO_SIZE: 'cpu' }, 'evaluation')
