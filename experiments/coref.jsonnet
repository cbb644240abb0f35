// Coreference with ELMo at the input of the document BiLSTM, no layer norm, λ = 0, 50% dropout
// (Peters et al. 2018, section 4); ELMo runs sentence by sentence.
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/coref.jsonnet -s runs/coref
// CPU-sized variant: ELMO_SIZE=cpu. Paper (OntoNotes, original biLM, test F1): 70.4; baseline 67.2.
local coref = import 'coref.libsonnet';
local elmo = import 'elmo.libsonnet';

coref.paths + coref.readers(coref.indexers { elmo: elmo.indexer }) {
  evaluate_on_test: true,
  random_seed: 13370,
  model: coref.model({ tokens: coref.word_embedding, token_characters: coref.char_cnn,
                       elmo: elmo.embedder(mixes=[elmo.mix()], dropout=0.5) }),
  dataset_metric: coref.dataset_metric,
  data_loader: coref.data_loader,
  trainer: coref.trainer,
}
