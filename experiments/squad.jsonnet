// SQuAD v1.1 with ELMo at the input and the output of the contextual GRU, no layer norm,
// λ = 0 (Peters et al. 2018, section 4). EM and F1 as the official v1.1 evaluation, on dev.
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/squad.jsonnet -s runs/squad
// CPU-sized variant: ELMO_SIZE=cpu. Paper (original biLM, test F1): 85.8; baseline 81.1.
// ELMo at the input only: -o 'model.token_embedders.elmo.mixes=[{}]'; at the output only: add
// -o model.token_embedders.elmo.at_input=false.
// Passages repeat (five questions each): the activation cache computes each one once, kept in
// fp16 (memory, or -o model.token_embedders.elmo.cache.disk_dir=DIR).
local squad = import 'squad.libsonnet';
local elmo = import 'elmo.libsonnet';

local indexers = squad.indexers { elmo: elmo.indexer };

squad.paths + squad.readers(indexers) {
  random_seed: 13370,
  model: squad.model({
    tokens: squad.word_embedding,
    token_characters: squad.char_cnn,
    elmo: elmo.embedder(mixes=[elmo.mix(), elmo.mix()], dropout=0.5) {
      cache: { fp16: true, memory_mb: 4096 },
    },
  }),
  dataset_metric: squad.dataset_metric,
  data_loader: squad.data_loader,
  trainer: squad.trainer,
}
