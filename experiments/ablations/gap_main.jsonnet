// Table 1's row for GAP (below the paper's six): baseline vs ELMo, 3 seeds:
//   elmo-exp sweep experiments/ablations/gap_main.jsonnet  (the CPU-sized variant, as coref_main)
(import '../lib/ablations.libsonnet').main('gap', { ELMO_SIZE: 'cpu' }) {
  variants: { baseline: { config: '../gap_baseline.jsonnet' }, elmo: {} },
}
