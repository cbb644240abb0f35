// SQuAD v1.1 baseline: BiDAF with Clark & Gardner's (2017) self-attention, no ELMo (Peters et
// al. 2018, section 4). EM and F1 exactly as the official v1.1 evaluation, on the dev set.
//   elmo-exp train experiments/squad_baseline.jsonnet -s runs/squad_baseline
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/squad_baseline.jsonnet -s runs/...
// CPU-sized variant: ELMO_SIZE=cpu (reproduction/squad/README.md). Paper (GloVe, test F1): 81.1.
// BiDAF as Seo et al. (2017) built it: -o model.highway_layers=2 and LSTMs (reproduction/squad/README.md).
local squad = import 'squad.libsonnet';

squad.paths + squad.readers(squad.indexers) {
  random_seed: 13370,
  model: squad.model({ tokens: squad.word_embedding, token_characters: squad.char_cnn }),
  dataset_metric: squad.dataset_metric,
  data_loader: squad.data_loader,
  trainer: squad.trainer,
}
