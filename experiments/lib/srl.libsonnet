// The SRL pieces (Peters et al. 2018, section 4, SRL; He et al. 2017), shared by the SRL configs.
// Data: CoNLL-2005 (train, devel; tests test.wsj and test.brown); the paper's SRL figure is on
// CoNLL-2012 (OntoNotes), the other standard benchmark of He et al. (reproduction/srl/README.md).
// ELMO_SIZE=cpu selects the CPU-sized variant: the first 8,000 training sentences, 4 layers of
// 150 units, 10 epochs at most; default: the paper's (8 layers of 300, 500 epochs).
local data = import 'data.libsonnet';
local switches = import 'switches.libsonnet';
local vectors = import 'vectors.libsonnet';
local cpu = switches.choice('ELMO_SIZE', ['paper', 'cpu'], 'paper') == 'cpu';
{
  cpu: cpu,
  indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  readers(indexers):: {
    dataset_reader: { type: 'srl_conll2005', token_indexers: indexers } +
                    (if cpu then { max_sentences: 8000 } else {}),
    validation_dataset_reader: { type: 'srl_conll2005', token_indexers: indexers },
  },
  // Rare roles (B-AA, some C-/R- forms) occur in devel or test but not in a training subset (the
  // CPU variant's first 8,000 sentences): they become classes the model never predicts, and the
  // official scorer still counts those gold arguments as missed.
  vocabulary: { labels_from_evaluation_data: true },
  paths: {
    train_data_path: data.path('srl_conll2005/train-set.gz', 'reproduction/srl/sample/train.txt'),
    validation_data_path: data.path('srl_conll2005/dev-set.gz', 'reproduction/srl/sample/dev.txt'),
    test_data_path: data.path('srl_conll2005/test-wsj.gz', 'reproduction/srl/sample/test.txt'),
  },
  // He et al.: 100-d GloVe; here vectors.libsonnet's (Gutenberg word2vec or random).
  word_embedding: vectors.embedding(100),
  model(embedders):: {
    type: 'srl_tagger',
    token_embedders: embedders,
    predicate_embedding_dim: 100,
    encoder: {
      type: 'alternating_lstm',
      hidden_size: if cpu then 150 else 300,
      num_layers: if cpu then 4 else 8,
      recurrent_dropout: 0.1,
    },
    constrain_decoding: true,
  },
  dataset_metric: { type: 'srl_eval' },
  data_loader: { batch_size: 80 },
  // Adadelta (lr 1.0, rho 0.95), gradients clipped to norm 1.0, batch 80.
  trainer: {
    num_epochs: if cpu then 10 else 500,
    patience: if cpu then 3 else 20,
    validation_metric: '+srl_f1',
    grad_norm: 1.0,
    optimizer: { type: 'adadelta', lr: 1.0, rho: 0.95, eps: 1e-6 },
  },
}
