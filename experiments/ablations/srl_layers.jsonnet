// Table 2 for SRL (CPU-sized variant): how the biLM layers are combined (ELMo at the input):
//   elmo-exp sweep experiments/ablations/srl_layers.jsonnet
(import '../lib/ablations.libsonnet').layers('srl', 1, { ELMO_SIZE: 'cpu' }, 'lambda0.001')
