// Figure 1 for SNLI: 10% and 100% of the 1% train sample we have (0.1% and 1% of SNLI)
(import '../lib/ablations.libsonnet').fractions('snli', [0.1, 1.0], { ELMO_SIZE: 'cpu' })
