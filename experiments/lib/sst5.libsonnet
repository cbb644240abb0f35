// The SST-5 BCN pieces (Peters et al. 2018, section 4, SST-5), shared by the SST configs.
// ELMO_SIZE=cpu selects the CPU-sized variant (reproduction/sst5/README.md); default: the paper's.
local data = import 'data.libsonnet';
local vectors = import 'vectors.libsonnet';
local switches = import 'switches.libsonnet';
local cpu = switches.choice('ELMO_SIZE', ['paper', 'cpu'], 'paper') == 'cpu';
local indexers = { tokens: { type: 'single_id', lowercase_tokens: false } };
{
  cpu: cpu,
  // Training reads every phrase of at least 4 tokens (the paper); evaluation the sentences.
  readers: {
    dataset_reader: { type: 'sst', token_indexers: indexers, use_subtrees: true,
                      min_phrase_length: 4 },
    validation_dataset_reader: { type: 'sst', token_indexers: indexers },
  },
  paths: {
    train_data_path: data.path('sst/train.txt', 'reproduction/sst5/sample/train.txt'),
    validation_data_path: data.path('sst/dev.txt', 'reproduction/sst5/sample/dev.txt'),
    test_data_path: data.path('sst/test.txt', 'reproduction/sst5/sample/test.txt'),
  },
  local hidden = if cpu then 100 else 300,
  // The paper: fixed GloVe 840B 300d; here vectors.libsonnet's (Gutenberg word2vec or random).
  word_embedding: vectors.embedding(hidden),
  model(embedders):: {
    type: 'bcn',
    token_embedders: embedders,
    pre_encode_dim: hidden,
    encoder: { type: 'lstm', hidden_sizes: [hidden], input_dropout: 0.0 },
    integrator: { type: 'lstm', hidden_sizes: [hidden], input_dropout: 0.0 },
    output_dims: if cpu then [400, 200] else [1200, 600],
    embedding_dropout: 0.5,
    pre_encode_dropout: 0.25,
    integrator_dropout: 0.1,
    output_dropout: [0.2, 0.3],
  },
  data_loader: { batch_size: 100 },
  // Adam 1e-4 (the paper) over 140 epochs; the 12-epoch CPU variant needs 1e-3.
  trainer: {
    num_epochs: if cpu then 12 else 140,
    patience: if cpu then 3 else 20,
    validation_metric: '+accuracy',
    grad_norm: 5.0,
    optimizer: { type: 'adam', lr: if cpu then 0.001 else 0.0001 },
  },
}
