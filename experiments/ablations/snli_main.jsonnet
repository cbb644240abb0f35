// Table 1 for SNLI (1% train sample), CPU-sized ESIM: elmo-exp sweep experiments/ablations/snli_main.jsonnet
(import '../lib/ablations.libsonnet').main('snli', { ELMO_SIZE: 'cpu' })
