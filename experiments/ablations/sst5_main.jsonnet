// Table 1 for SST-5, CPU-sized BCN: elmo-exp sweep experiments/ablations/sst5_main.jsonnet
(import '../lib/ablations.libsonnet').main('sst5', { ELMO_SIZE: 'cpu' }, levers=['elmo_wide'])
