// GAP baseline (Webster et al. 2018, gendered ambiguous pronouns): the coreference model's span
// representations (Lee et al. 2017) scoring the pronoun against names A and B, no ELMo.
// Official metric: F1 over the A and B decisions (the GAP scorer's), masculine, feminine, bias.
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/gap_baseline.jsonnet -s runs/gap_baseline
// Data: $ELMO_DATA_DIR/coref_gap/ (gap-development.tsv trains, gap-validation.tsv selects the
// epoch, gap-test.tsv tests); without it the embedded sample (reproduction/gap/sample/).
// CPU-sized variant: ELMO_SIZE=cpu (100-d vectors, a 100-unit BiLSTM, 100-unit scorer, 10
// epochs). See reproduction/gap/README.md.
local data = import 'data.libsonnet';
local switches = import 'switches.libsonnet';
local vectors = import 'vectors.libsonnet';
local cpu = switches.choice('ELMO_SIZE', ['paper', 'cpu'], 'paper') == 'cpu';
local indexers = {
  tokens: { type: 'single_id', lowercase_tokens: false },
  token_characters: { type: 'characters', min_padding_length: 5 },
};
local embedders = {
  // Lee et al.: GloVe 300d; here vectors.libsonnet's (word2vec on the biLM's corpus, or random)
  tokens: vectors.embedding(if cpu then 100 else 300),
  token_characters: { type: 'character_encoding', embedding_dim: 8, num_filters: 50,
                      ngram_filter_sizes: [3, 4, 5], activation: 'relu' },
};
{
  // what gap.jsonnet builds on (hidden: not part of this config)
  indexers:: indexers,
  embedders:: embedders,
  dataset_reader: { type: 'gap_tsv', token_indexers: $.indexers },
  train_data_path: data.path('coref_gap/gap-development.tsv', 'reproduction/gap/sample/train.tsv'),
  validation_data_path: data.path('coref_gap/gap-validation.tsv', 'reproduction/gap/sample/dev.tsv'),
  test_data_path: data.path('coref_gap/gap-test.tsv', 'reproduction/gap/sample/test.tsv'),
  evaluate_on_test: true,
  random_seed: 13370,
  model: {
    type: 'gap_pronoun',
    token_embedders: $.embedders,
    context_encoder: { type: 'lstm', hidden_sizes: [if cpu then 100 else 200],
                       input_dropout: 0.2 },
    feedforward_dims: if cpu then [100, 100] else [150, 150],
    feature_size: 20,
    max_span_width: 10,
    lexical_dropout: 0.5,
    dropout: 0.2,
  },
  dataset_metric: { type: 'gap' },
  data_loader: { batch_size: 32 },
  trainer: {
    num_epochs: if cpu then 10 else 40,
    patience: if cpu then 3 else 10,
    validation_metric: '+gap_f1',
    grad_norm: 5.0,
    optimizer: { type: 'adam', lr: 0.001 },
  },
}
