// Figure 1 for SRL (CPU-sized variant): baseline vs ELMo on 1%, 10% and 100% of its training
// instances (predicates): elmo-exp sweep experiments/ablations/srl_fractions.jsonnet
(import '../lib/ablations.libsonnet').fractions('srl', [0.01, 0.1, 1.0], { ELMO_SIZE: 'cpu' })
