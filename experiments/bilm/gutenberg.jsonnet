// The biLM that ships inside the package as `weights: 'gutenberg'` (see its MODEL_CARD.md).
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/gutenberg.jsonnet -s runs/bilm_gutenberg
//   (interrupted? the same command with --recover resumes it; extend with -o trainer.num_epochs=N)
// Corpus: the 100 public-domain Gutenberg novels, with LitBank's 100 coreference excerpts cut out
// first, so that LitBank stays unseen (reported as a held-out language-modelling text too).
// Held out: every 100th sentence (model selection).
// Sized to ship: stored in float16, the biLM (11.9M parameters) and its 28,000-word softmax
// fit in 40 MB.
local bilm = import 'bilm.libsonnet';
local data = import 'data.libsonnet';
local env = std.native('env');
local prepared = env('ELMO_PREPARED_CORPUS');
local sample = 'reproduction/bilm/sample/';

{
  corpus: {
    train: if data.root == '' then [
      { path: data.path('', sample + 'story.txt'), format: 'raw' },
    ] else [
      { path: data.root + '/lm_corpus/gutenberg', format: 'raw',
        exclude: data.root + '/coref_litbank/conll' },
    ],
    evaluation: if data.root == '' then [
      { name: 'sample_heldout', path: data.path('', sample + 'heldout.txt') },
    ] else [
      { name: 'litbank', path: data.root + '/coref_litbank/conll', format: 'conll2012' },
    ],
    heldout_every: 100,
    max_sentence_length: 60,
    vocab_size: 28000,
    min_count: 3,
    prepared_dir: if prepared == '' then null else prepared,
  },
  model: {
    type: 'bilm_lm',
    cell_dim: 1024,
    projection_dim: 256,
    n_highway: 1,
    char_embedding_dim: 16,
    filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512]],
    dropout: 0.1,
    num_samples: 4096,
  },
  data_loader: { batch_size: 64, batches_per_epoch: 500, max_eval_sentences: 2000 },
  trainer: bilm.trainer(epochs=40) {
    // fused: one pass per parameter, same arithmetic; the shipped biLM was trained before it
    // (the unfused update, which differs only in rounding)
    optimizer: { type: 'adam', lr: 0.002, fused: true },
    learning_rate_scheduler: { type: 'reduce_on_plateau', factor: 0.5, patience: 1 },
  },
  random_seed: 13370,
}
