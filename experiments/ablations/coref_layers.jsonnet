// Table 2 for coreference (CPU-sized variant, LitBank dev): baseline, last layer only, all
// layers with λ = 1 and with λ = 0.001 (the shipped config's λ is 0, so no column is its run):
//   elmo-exp sweep experiments/ablations/coref_layers.jsonnet --activation-cache DIR
(import '../lib/ablations.libsonnet').layers('coref', 1, { ELMO_SIZE: 'cpu' })
