// GAP with ELMo at the input of the text's BiLSTM, λ = 0, no layer norm, 50% dropout (as the
// coreference config: the model is coreference's span representations, scored as pairs).
//   ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/gap.jsonnet -s runs/gap
// CPU-sized variant: ELMO_SIZE=cpu. Baseline: experiments/gap_baseline.jsonnet;
// reproduction/gap/README.md.
local elmo = import 'elmo.libsonnet';
local baseline = import 'gap_baseline.jsonnet';

baseline {
  indexers:: super.indexers { elmo: elmo.indexer },
  embedders:: super.embedders { elmo: elmo.embedder(mixes=[elmo.mix()], dropout=0.5) },
}
