// Table 2 for SQuAD (CPU-sized variant): how the biLM layers are combined, at both placements:
//   elmo-exp sweep experiments/ablations/squad_layers.jsonnet
(import '../lib/ablations.libsonnet').layers('squad', 2, { ELMO_SIZE: 'cpu' })
