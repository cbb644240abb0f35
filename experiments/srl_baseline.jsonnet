// SRL baseline: He et al.'s (2017) deep alternating highway BiLSTM, no ELMo (Peters et al.
// 2018, section 4). Official CoNLL-2005 figures (srl-eval.pl's rules), dev for selection,
// test.wsj as the test set (test.brown: elmo-exp evaluate RUN .../test-brown.gz).
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/srl_baseline.jsonnet -s runs/srl_baseline
// CPU-sized variant: ELMO_SIZE=cpu (reproduction/srl/README.md). Paper (CoNLL-2012, test F1): 81.4.
local srl = import 'srl.libsonnet';

srl.paths + srl.readers(srl.indexers) {
  evaluate_on_test: true,
  random_seed: 13370,
  model: srl.model({ tokens: srl.word_embedding }),
  vocabulary: srl.vocabulary,
  dataset_metric: srl.dataset_metric,
  data_loader: srl.data_loader,
  trainer: srl.trainer,
}
