// Our small English biLM: the best these 2 CPU cores can train in a few hours (resumable).
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/small.jsonnet -s runs/bilm_small
//   (interrupted? add --recover; export any checkpoint: elmo-exp export-bilm runs/bilm_small OUT)
// Corpus: Gutenberg novels (raw text), PTB train, Brown (about 13M words); held out: every 100th
// training sentence (model selection), PTB test, WikiText-2 valid and test (reported only).
// Our measured figures: reproduction/bilm/README.md.
// Without ELMO_DATA_DIR it falls back to the embedded sample corpus (reproduction/bilm/sample).
local bilm = import 'bilm.libsonnet';
local data = import 'data.libsonnet';
local env = std.native('env');
local prepared = env('ELMO_PREPARED_CORPUS');
local sample = 'reproduction/bilm/sample/';

{
  corpus: {
    train: if data.root == '' then [
      { path: data.path('', sample + 'train.txt'), format: 'tokenized' },
      { path: data.path('', sample + 'story.txt'), format: 'raw' },
    ] else [
      { path: data.root + '/lm_corpus/gutenberg', format: 'raw' },
      { path: data.root + '/lm_corpus/ptb/ptb.train.txt.gz', format: 'tokenized' },
      { path: data.root + '/lm_corpus/brown.zip', format: 'brown' },
    ],
    evaluation: if data.root == '' then [
      { name: 'sample_heldout', path: data.path('', sample + 'heldout.txt') },
    ] else [
      { name: 'ptb_test', path: data.root + '/lm_corpus/ptb/ptb.test.txt' },
      { name: 'wikitext2_valid', path: data.root + '/lm_corpus/wikitext2/wiki.valid.tokens' },
      { name: 'wikitext2_test', path: data.root + '/lm_corpus/wikitext2/wiki.test.tokens' },
    ],
    heldout_every: 100,
    max_sentence_length: 60,
    vocab_size: 50000,
    min_count: 3,
    prepared_dir: if prepared == '' then null else prepared,
  },
  model: {
    type: 'bilm_lm',
    cell_dim: 512,
    projection_dim: 128,
    n_highway: 1,
    char_embedding_dim: 16,
    filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256]],
    dropout: 0.1,
    num_samples: 4096,
  },
  data_loader: { batch_size: 64, batches_per_epoch: 1000, max_eval_sentences: 2000 },
  // Adam: on a few CPU hours it beats bilm-tf's Adagrad (lr 0.2) by far (probe: heldout
  // perplexity 510 vs 1253 after 120 batches).
  trainer: bilm.trainer(epochs=8) {
    optimizer: { type: 'adam', lr: 0.002 },
    learning_rate_scheduler: { type: 'reduce_on_plateau', factor: 0.5, patience: 1 },
  },
  random_seed: 13370,
}
