// SRL with ELMo at the input (Peters et al. 2018, section 4; λ = 0.001 as in its Table 2).
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/srl.jsonnet -s runs/srl
// ELMo at the output too: -o 'model.token_embedders.elmo.mixes=[{"l2":0.001},{"l2":0.001}]'.
// CPU-sized variant: ELMO_SIZE=cpu. Paper (CoNLL-2012, original biLM, test F1): 84.6; baseline 81.4.
local srl = import 'srl.libsonnet';
local elmo = import 'elmo.libsonnet';

srl.paths + srl.readers(srl.indexers { elmo: elmo.indexer }) {
  evaluate_on_test: true,
  random_seed: 13370,
  model: srl.model({ tokens: srl.word_embedding,
                     elmo: elmo.embedder(mixes=[elmo.mix(l2=0.001)], dropout=0.5) }),
  vocabulary: srl.vocabulary,
  dataset_metric: srl.dataset_metric,
  data_loader: srl.data_loader,
  trainer: srl.trainer,
}
