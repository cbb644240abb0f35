// Table 1 for SQuAD (CPU-sized variant): baseline vs ELMo, 3 seeds, on the official dev set:
//   elmo-exp sweep experiments/ablations/squad_main.jsonnet
(import '../lib/ablations.libsonnet').main('squad', { ELMO_SIZE: 'cpu' })
