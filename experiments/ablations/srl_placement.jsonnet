// Table 3 for SRL (CPU-sized variant): ELMo at the input, the output, or both (λ = 0.001):
//   elmo-exp sweep experiments/ablations/srl_placement.jsonnet
(import '../lib/ablations.libsonnet').placement('srl', { mode: 'learned', l2: 0.001 }, { ELMO_SIZE: 'cpu' })
