// The CoNLL-2003 BiLSTM-CRF pieces (Peters et al. 2018, section 4, NER), shared by the NER configs.
local data = import 'data.libsonnet';
local vectors = import 'vectors.libsonnet';
{
  reader: {
    type: 'conll2003',
    tag_label: 'ner',
    coding_scheme: 'BIOUL',
    token_indexers: {
      tokens: { type: 'single_id', lowercase_tokens: true },
      token_characters: { type: 'characters', min_padding_length: 3 },
    },
  },
  // A small share of the training data (Figure 1's 1%) can miss a tag that devel holds (I-LOC):
  // it becomes a class the model never predicts. Full training data holds every tag, and then
  // this changes nothing.
  vocabulary: { labels_from_evaluation_data: true },
  paths: {
    train_data_path: data.path('ner_conll2003/eng.train', 'reproduction/ner/sample/train.txt'),
    validation_data_path: data.path('ner_conll2003/eng.testa', 'reproduction/ner/sample/dev.txt'),
    test_data_path: data.path('ner_conll2003/eng.testb', 'reproduction/ner/sample/test.txt'),
  },
  word_embedding(dim=50):: vectors.embedding(dim),
  char_cnn: {
    type: 'character_encoding',
    embedding_dim: 16,
    num_filters: 128,
    ngram_filter_sizes: [3],
    activation: 'relu',
  },
  encoder: { type: 'lstm', hidden_sizes: [200, 100], bidirectional: true, input_dropout: 0.5 },
}
