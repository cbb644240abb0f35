// Table 3 for SNLI, CPU-sized ESIM: elmo-exp sweep experiments/ablations/snli_placement.jsonnet
(import '../lib/ablations.libsonnet').placement('snli', { mode: 'learned', l2: 0.001, layer_norm: true }, { ELMO_SIZE: 'cpu' }, 'input_output')
