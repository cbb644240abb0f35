// Domain fine-tuning of a biLM (Peters et al. 2018, supplement A.1): continue it for one pass
// over a task's training text, labels ignored, then use it frozen in the task. The text is read
// by the task's own experiment config (its training reader with its subsets, its training data,
// its train_data_fraction; each distinct sentence once), so a CPU variant's subset is what it
// fine-tunes on. Dev and test text are never read: model selection uses every 20th training
// sentence, held out.
// The architecture, the weights and the softmax (with its vocabulary) come from --init-from:
//   elmo-exp pretrain experiments/bilm/finetune_<task>.jsonnet -s runs/bilm_finetuned/<task> \
//       --init-from gutenberg
// `experiment`: the task config, relative to the project; `ext_vars`: for it (ELMO_SIZE);
// `reader`: 'evaluation' where the training reader yields more than the text (SST: every phrase).
function(experiment, ext_vars={}, reader=null) {
  corpus: {
    train: [{ path: std.native('project_path')(experiment), format: 'experiment',
              split: 'train', ext_vars: ext_vars, reader: reader }],
    evaluation: [],
    heldout_every: 20,
    max_sentence_length: 60,
    prepared_dir: null,
  },
  // the continued biLM's dropout; its sampled softmax as in pretraining (gutenberg.jsonnet)
  model: { type: 'bilm_lm', dropout: 0.1, num_samples: 4096 },
  data_loader: { batch_size: 64, batches_per_epoch: null, max_eval_sentences: 2000 },
  trainer: {
    num_epochs: 1,
    validation_metric: '-perplexity',
    grad_norm: 10.0,
    optimizer: { type: 'adam', lr: 0.001 },
  },
  random_seed: 13370,
}
