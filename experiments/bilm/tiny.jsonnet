// A tiny biLM on the embedded sample corpus: tests and the demo (under 2 minutes on 2 CPU cores).
//   elmo-exp pretrain experiments/bilm/tiny.jsonnet -s runs/bilm_tiny
// Exports runs/bilm_tiny/bilm/{options.json, weights.hdf5, softmax.hdf5, vocab.txt}.
local bilm = import 'bilm.libsonnet';
local project = std.native('project_path');

{
  corpus: {
    train: [
      { path: project('reproduction/bilm/sample/train.txt'), format: 'tokenized' },
      { path: project('reproduction/bilm/sample/story.txt'), format: 'raw' },
    ],
    evaluation: [{ name: 'sample_heldout', path: project('reproduction/bilm/sample/heldout.txt') }],
    heldout_every: 20,
    vocab_size: 200,
  },
  model: {
    type: 'bilm_lm',
    cell_dim: 64,
    projection_dim: 16,
    n_highway: 1,
    char_embedding_dim: 8,
    filters: [[1, 8], [2, 8], [3, 16], [4, 16]],
    dropout: 0.1,
    num_samples: 64,
  },
  data_loader: { batch_size: 32, batches_per_epoch: 20 },
  trainer: bilm.trainer(epochs=5, lr=0.2) { progress_bar: true },
  random_seed: 13370,
}
