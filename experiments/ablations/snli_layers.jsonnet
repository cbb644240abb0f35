// Table 2 for SNLI (1% train sample), CPU-sized ESIM: elmo-exp sweep experiments/ablations/snli_layers.jsonnet
(import '../lib/ablations.libsonnet').layers('snli', 2, { ELMO_SIZE: 'cpu' })
