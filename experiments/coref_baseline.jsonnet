// Coreference baseline: Lee et al.'s (2017) end-to-end span-ranking model, no ELMo (Peters et
// al. 2018, section 4). The CoNLL F1 (MUC, B-cubed, CEAF-e averaged, as the reference scorer).
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/coref_baseline.jsonnet -s runs/coref_baseline
// CPU-sized variant: ELMO_SIZE=cpu (reproduction/coref/README.md). Paper (OntoNotes, test F1): 67.2.
local coref = import 'coref.libsonnet';

coref.paths + coref.readers(coref.indexers) {
  evaluate_on_test: true,
  random_seed: 13370,
  model: coref.model({ tokens: coref.word_embedding, token_characters: coref.char_cnn }),
  dataset_metric: coref.dataset_metric,
  data_loader: coref.data_loader,
  trainer: coref.trainer,
}
