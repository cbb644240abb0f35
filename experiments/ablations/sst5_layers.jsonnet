// Table 2 for SST-5, CPU-sized BCN (ELMO_SIZE=cpu): elmo-exp sweep experiments/ablations/sst5_layers.jsonnet
(import '../lib/ablations.libsonnet').layers('sst5', 2, { ELMO_SIZE: 'cpu' }, 'lambda0.001')
