// The SNLI ESIM pieces (Peters et al. 2018, section 4, SNLI), shared by the SNLI configs.
// ELMO_SIZE=cpu selects the CPU-sized variant (reproduction/snli/README.md); default: the paper's.
// Train here is the 1% sample of SNLI (5,498 labelled pairs); dev and test are complete.
local data = import 'data.libsonnet';
local vectors = import 'vectors.libsonnet';
local switches = import 'switches.libsonnet';
local cpu = switches.choice('ELMO_SIZE', ['paper', 'cpu'], 'paper') == 'cpu';
local hidden = if cpu then 100 else 300;
{
  cpu: cpu,
  reader(indexers):: { type: 'snli', token_indexers: indexers },
  indexers: { tokens: { type: 'single_id', lowercase_tokens: false } },
  paths: {
    train_data_path: data.path('snli/snli_1.0_train_1pct.jsonl.gz', 'reproduction/snli/sample/train.jsonl'),
    validation_data_path: data.path('snli/snli_1.0_dev.jsonl.gz', 'reproduction/snli/sample/dev.jsonl'),
    test_data_path: data.path('snli/snli_1.0_test.jsonl.gz', 'reproduction/snli/sample/test.jsonl'),
  },
  // The paper: fixed GloVe 840B 300d; here vectors.libsonnet's (Gutenberg word2vec or random).
  word_embedding: vectors.embedding(hidden),
  // 50% variational dropout on every LSTM input (the encoders' input_dropout).
  model(embedders, attention_dropout=0.0, weight_l2=0.0):: {
    type: 'esim',
    token_embedders: embedders,
    encoder: { type: 'lstm', hidden_sizes: [hidden], input_dropout: 0.5 },
    projection_dim: hidden,
    inference_encoder: { type: 'lstm', hidden_sizes: [hidden], input_dropout: 0.5 },
    output_dim: hidden,
    dropout: 0.5,
    attention_dropout: attention_dropout,
    weight_l2: weight_l2,
  },
  data_loader: { batch_size: 32 },
  // Adam 4e-4, halved when dev accuracy stalls, gradient norm 5.
  trainer: {
    num_epochs: if cpu then 10 else 75,
    patience: 5,
    validation_metric: '+accuracy',
    grad_norm: 5.0,
    optimizer: { type: 'adam', lr: 0.0004 },
    learning_rate_scheduler: { type: 'reduce_on_plateau', factor: 0.5, patience: 0 },
  },
}
