// The shipped `gutenberg` biLM, continued on its own corpus until its held-out perplexity stops
// falling (3 epochs in a row without a gain), in bf16 where the CPU multiplies bf16 natively
// (AMX, AVX-512 BF16; elsewhere in fp32, with a warning).
//   ELMO_DATA_DIR=/path/to/data ELMO_PREPARED_CORPUS=runs/gutenberg_corpus \
//       elmo-exp pretrain experiments/bilm/gutenberg_continued.jsonnet -s runs/bilm_continued \
//       --init-from gutenberg
//   (interrupted? the same command with --recover resumes it)
// Same corpus, exclusion and held-out split as gutenberg.jsonnet (every 100th sentence); the
// architecture and the softmax vocabulary come from --init-from. Adam starts afresh, at half
// the first run's rate, halved again on every plateau.
local gutenberg = import 'gutenberg.jsonnet';

{
  corpus: gutenberg.corpus,  // its vocabulary settings go unused: the softmax's words come along
  model: { type: 'bilm_lm', dropout: 0.1, num_samples: 4096 },
  data_loader: gutenberg.data_loader,
  trainer: {
    num_epochs: 60,
    patience: 3,
    amp: 'bf16',
    validation_metric: '-perplexity',
    grad_norm: 10.0,
    optimizer: { type: 'adam', lr: 0.001, fused: true },
    learning_rate_scheduler: { type: 'reduce_on_plateau', factor: 0.5, patience: 1 },
  },
  random_seed: 13371,
}
