// Table 1 for SRL (CPU-sized variant, CoNLL-2005): baseline, ELMo, MiniLM, 3 seeds:
//   elmo-exp sweep experiments/ablations/srl_main.jsonnet
(import '../lib/ablations.libsonnet').main('srl', { ELMO_SIZE: 'cpu' })
