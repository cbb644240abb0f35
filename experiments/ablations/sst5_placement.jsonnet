// Table 3 for SST-5, CPU-sized BCN: elmo-exp sweep experiments/ablations/sst5_placement.jsonnet
(import '../lib/ablations.libsonnet').placement('sst5', { mode: 'learned', l2: 0.001 }, { ELMO_SIZE: 'cpu' }, 'input_output')
