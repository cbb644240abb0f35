// A tiny German biLM on the embedded German sample (reproduction/bilm/sample/de): raw text tokenised and
// split into sentences with spaCy's German rules (language: 'de'). Tests and docs/your-own-bilm.md.
//   elmo-exp pretrain experiments/bilm/tiny_de.jsonnet -s runs/bilm_tiny_de --dry-run
//   elmo-exp pretrain experiments/bilm/tiny_de.jsonnet -s runs/bilm_tiny_de
// Your own language: point corpus.train at your raw text and set its language (any code spaCy has
// rules for), or give format 'tokenized' for text already tokenised, one sentence per line.
local bilm = import 'bilm.libsonnet';
local project = std.native('project_path');
local sample = 'reproduction/bilm/sample/de/';

{
  corpus: {
    train: [{ path: project(sample + 'text.txt'), format: 'raw', language: 'de' }],
    evaluation: [
      { name: 'sample_heldout', path: project(sample + 'heldout.txt'), format: 'raw',
        language: 'de' },
    ],
    heldout_every: 20,
    max_sentence_length: 40,
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
  data_loader: { batch_size: 32 },
  trainer: bilm.trainer(epochs=10, lr=0.2) { progress_bar: false },
  random_seed: 13370,
}
