// SNLI baseline: ESIM, no ELMo (Peters et al. 2018, section 4). Accuracy over the three labels.
//   elmo-exp train experiments/snli_baseline.jsonnet -s runs/snli_baseline
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/snli_baseline.jsonnet -s runs/snli_baseline
// CPU-sized variant (100-d, 10 epochs): ELMO_SIZE=cpu; see reproduction/snli/README.md.
// Paper (full train, GloVe, test accuracy): 88.0. Here train is the 1% sample: see the README.
// Our measured figures: reproduction/snli/README.md.
local snli = import 'snli.libsonnet';

snli.paths {
  dataset_reader: snli.reader(snli.indexers),
  evaluate_on_test: true,
  random_seed: 13370,
  model: snli.model({ tokens: snli.word_embedding }),
  data_loader: snli.data_loader,
  trainer: snli.trainer,
}
