// SST-5 baseline: BCN, no ELMo (Peters et al. 2018, section 4). Fine-grained sentence accuracy.
//   elmo-exp train experiments/sst5_baseline.jsonnet -s runs/sst5_baseline
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/sst5_baseline.jsonnet -s runs/sst5_baseline
// CPU-sized variant (100-d BiLSTMs, 12 epochs): ELMO_SIZE=cpu; see reproduction/sst5/README.md.
// Paper (GloVe, test accuracy): 51.4. See reproduction/sst5/README.md.
// Our measured figures: reproduction/sst5/README.md.
local sst = import 'sst5.libsonnet';

sst.paths + sst.readers {
  evaluate_on_test: true,
  random_seed: 13370,
  model: sst.model({ tokens: sst.word_embedding }),
  data_loader: sst.data_loader,
  trainer: sst.trainer,
}
