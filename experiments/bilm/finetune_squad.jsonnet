// Fine-tune a biLM on the squad task's training text: SQuAD's training passages and questions (Wikipedia), the CPU variant's 40 articles.
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_squad.jsonnet \
//       -s runs/bilm_finetuned/squad --init-from gutenberg
// then use it: ELMO_WEIGHTS=runs/bilm_finetuned/squad/bilm (the squad sweep's elmo_finetuned variant).
(import '../lib/finetune.libsonnet')('experiments/squad.jsonnet', { ELMO_SIZE: 'cpu' })
