// SST-5 with ELMo at the input and the integrator's output, λ = 0.001 (Peters et al. 2018, §4).
//   ELMO_WEIGHTS=/path/to/bilm elmo-exp train experiments/sst5.jsonnet -s runs/sst5
//   ELMO_DATA_DIR=/path/to/data ELMO_WEIGHTS=... elmo-exp train experiments/sst5.jsonnet -s runs/sst5
// CPU-sized variant: ELMO_SIZE=cpu. ELMo at the input only: -o 'model.token_embedders.elmo.mixes=[{"l2":0.001}]';
// at the output only: add -o model.token_embedders.elmo.at_input=false.
// Paper (original biLM, test accuracy): 54.7 ± 0.5; baseline 51.4. See reproduction/sst5/README.md.
// Our measured figures: reproduction/sst5/README.md.
local sst = import 'sst5.libsonnet';
local elmo = import 'elmo.libsonnet';

local indexers = { tokens: { type: 'single_id', lowercase_tokens: false }, elmo: elmo.indexer };

sst.paths {
  dataset_reader: sst.readers.dataset_reader { token_indexers: indexers },
  validation_dataset_reader: sst.readers.validation_dataset_reader { token_indexers: indexers },
  evaluate_on_test: true,
  random_seed: 13370,
  // BCN drops its whole input (embedding_dropout 0.5), ELMo included: no second ELMo dropout.
  model: sst.model({
    tokens: sst.word_embedding,
    // every training phrase's activations stay in memory (about 1.1M tokens, 6 KB a token
    // with the shipped biLM); less memory: cache: { fp16: true } or a disk_dir
    elmo: elmo.embedder(mixes=[elmo.mix(l2=0.001), elmo.mix(l2=0.001)], dropout=0.0) {
      cache: { memory_mb: 8192 },
    },
  }),
  data_loader: sst.data_loader,
  trainer: sst.trainer,
}
