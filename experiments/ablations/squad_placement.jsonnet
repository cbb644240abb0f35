// Table 3 for SQuAD (CPU-sized variant): ELMo at the input, the output, or both (λ = 0):
//   elmo-exp sweep experiments/ablations/squad_placement.jsonnet
(import '../lib/ablations.libsonnet').placement('squad', { mode: 'learned', l2: 0.0 }, { ELMO_SIZE: 'cpu' }, 'input_output')
