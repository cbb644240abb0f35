// The coreference pieces (Peters et al. 2018, section 4, coreference; Lee et al. 2017), shared
// by the coref configs. Data: LitBank (100 novel excerpts; our 80/10/10 split in split.json);
// the paper's figure is on OntoNotes (CoNLL-2012), which LDC licenses (reproduction/coref/README.md).
// ELMO_SIZE=cpu selects the CPU-sized variant: training windows of 20 sentences, a 100-unit
// BiLSTM, 100-unit scorers, 50 antecedents, 10 epochs; default: the original model's settings.
local data = import 'data.libsonnet';
local switches = import 'switches.libsonnet';
local vectors = import 'vectors.libsonnet';
local cpu = switches.choice('ELMO_SIZE', ['paper', 'cpu'], 'paper') == 'cpu';
{
  cpu: cpu,
  indexers: {
    tokens: { type: 'single_id', lowercase_tokens: false },
    token_characters: { type: 'characters', min_padding_length: 5 },
  },
  // Training documents are cut into windows of sentences (Lee et al.: 50); evaluation reads
  // every document whole.
  readers(indexers):: {
    dataset_reader: { type: 'coref_conll2012', token_indexers: indexers,
                      max_sentences: if cpu then 20 else 50 },
    validation_dataset_reader: { type: 'coref_conll2012', token_indexers: indexers },
  },
  paths: {
    train_data_path: data.path('coref_litbank/conll#train', 'reproduction/coref/sample/train.conll'),
    validation_data_path: data.path('coref_litbank/conll#dev', 'reproduction/coref/sample/dev.conll'),
    test_data_path: data.path('coref_litbank/conll#test', 'reproduction/coref/sample/test.conll'),
  },
  // Lee et al.: GloVe 300d and Turian 50d, fixed; here vectors.libsonnet's (word2vec or random).
  word_embedding: vectors.embedding(if cpu then 100 else 300),
  // Lee et al.: 8-d character embeddings, windows of 3, 4 and 5 characters, 50 filters each.
  char_cnn: {
    type: 'character_encoding',
    embedding_dim: 8,
    num_filters: 50,
    ngram_filter_sizes: [3, 4, 5],
    activation: 'relu',
  },
  model(embedders):: {
    type: 'coref',
    token_embedders: embedders,
    context_encoder: { type: 'lstm', hidden_sizes: [if cpu then 100 else 200],
                       input_dropout: 0.2 },
    feedforward_dims: if cpu then [100, 100] else [150, 150],
    feature_size: 20,
    max_span_width: 10,
    spans_per_word: 0.4,
    max_antecedents: if cpu then 50 else 250,
    lexical_dropout: 0.5,
    dropout: 0.2,
  },
  dataset_metric: { type: 'conll_coref' },
  data_loader: { batch_size: 1, padding_noise: 0.0 },
  trainer: {
    num_epochs: if cpu then 10 else 150,
    patience: if cpu then 3 else 10,
    validation_metric: '+coref_f1',
    grad_norm: 5.0,
    optimizer: { type: 'adam', lr: 0.001 },
  },
}
