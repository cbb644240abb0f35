// NER baseline: BiLSTM-CRF on CoNLL-2003, no ELMo (Peters et al. 2018, section 4; docs/paper.md).
//   elmo-exp train experiments/ner_baseline.jsonnet -s runs/ner_baseline
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/ner_baseline.jsonnet -s runs/ner_baseline
// Paper (Senna 50d vectors, test F1): 90.15. Our measured figures: reproduction/ner/README.md.
// Shorter runs: -o trainer.num_epochs=3; another seed: -o random_seed=1.
local ner = import 'ner.libsonnet';
local train = import 'trainer.libsonnet';

ner.paths {
  dataset_reader: ner.reader,
  vocabulary: ner.vocabulary,
  evaluate_on_test: true,
  dataset_metric: { type: 'conlleval' },  // conlleval's figures from its own input format
  random_seed: 13370,
  model: {
    type: 'crf_tagger',
    token_embedders: {
      tokens: ner.word_embedding(50),
      token_characters: ner.char_cnn,
    },
    encoder: ner.encoder,
    dropout: 0.5,
    constrain_crf_decoding: true,
  },
  data_loader: { batch_size: 64 },
  trainer: train.trainer('+f1', epochs=50, patience=10, lr=0.001, grad_norm=5.0),
}
