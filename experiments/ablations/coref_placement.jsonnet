// Table 3 for coreference (CPU-sized variant, LitBank dev): ELMo at the input of the document
// BiLSTM (the shipped config), at its output, or both (λ = 0, no layer norm):
//   elmo-exp sweep experiments/ablations/coref_placement.jsonnet --activation-cache DIR
(import '../lib/ablations.libsonnet').placement('coref', { mode: 'learned', l2: 0.0 }, { ELMO_SIZE: 'cpu' })
