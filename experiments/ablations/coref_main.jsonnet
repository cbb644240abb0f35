// Table 1 for coreference (CPU-sized variant, LitBank): baseline, ELMo, MiniLM, 3 seeds:
//   elmo-exp sweep experiments/ablations/coref_main.jsonnet
(import '../lib/ablations.libsonnet').main('coref', { ELMO_SIZE: 'cpu' })
