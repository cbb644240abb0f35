// The SQuAD v1.1 pieces (Peters et al. 2018, section 4, SQuAD), shared by the SQuAD configs.
// The model is BiDAF with Clark & Gardner's (2017) changes, as in the paper: GRUs, a linear +
// ReLU layer after the attention, residual self-attention; Adadelta, batch 45, an exponential
// moving average of the weights for evaluation. Selection and the reported figures are on the
// official dev set (SQuAD's test set is hidden).
// ELMO_SIZE=cpu selects the CPU-sized variant (reproduction/squad/README.md): the first 40 training
// articles, narrower layers, passages cut at 300 tokens, fewer epochs; default: the paper's.
local data = import 'data.libsonnet';
local switches = import 'switches.libsonnet';
local vectors = import 'vectors.libsonnet';
local cpu = switches.choice('ELMO_SIZE', ['paper', 'cpu'], 'paper') == 'cpu';
local hidden = if cpu then 45 else 90;
{
  cpu: cpu,
  indexers: {
    tokens: { type: 'single_id', lowercase_tokens: false },
    token_characters: { type: 'characters', min_padding_length: 5 },
  },
  // Training passages are cut at 400 tokens (answers beyond are dropped); evaluation reads
  // every question of the file, whole.
  readers(indexers):: {
    dataset_reader: {
      type: 'squad',
      token_indexers: indexers,
      passage_length_limit: if cpu then 300 else 400,
      question_length_limit: 50,
    } + (if cpu then { max_articles: 40 } else {}),
    validation_dataset_reader: { type: 'squad', token_indexers: indexers },
  },
  paths: {
    train_data_path: data.path('squad/train-v1.1.json.gz', 'reproduction/squad/sample/train.json'),
    validation_data_path: data.path('squad/dev-v1.1.json.gz', 'reproduction/squad/sample/dev.json'),
  },
  // The paper: fixed GloVe 840B 300d; here vectors.libsonnet's (Gutenberg word2vec or random).
  word_embedding: vectors.embedding(if cpu then 100 else 300),
  // Clark & Gardner: 20-d character embeddings, 100 filters of width 5, max-pooled.
  char_cnn: {
    type: 'character_encoding',
    embedding_dim: 20,
    num_filters: if cpu then 50 else 100,
    ngram_filter_sizes: [5],
    activation: 'relu',
  },
  local gru = { type: 'gru', hidden_sizes: [hidden], input_dropout: 0.2 },
  model(embedders):: {
    type: 'bidaf',
    token_embedders: embedders,
    highway_layers: 0,
    phrase_encoder: gru,
    attention_projection_dim: 2 * hidden,
    self_attention: gru,
    modeling_encoder: gru,
    span_end_encoder: gru,
    dropout: 0.2,
    max_span_length: 17,
  },
  dataset_metric: { type: 'squad' },
  data_loader: { batch_size: 45 },
  trainer: {
    num_epochs: if cpu then 8 else 30,
    patience: if cpu then 3 else 10,
    validation_metric: '+f1',
    grad_norm: 5.0,
    optimizer: { type: 'adadelta', lr: 1.0 },
    moving_average: { decay: 0.999 },
  },
}
