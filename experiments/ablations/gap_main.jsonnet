// Table 1's row for GAP (below the paper's six): baseline vs ELMo, 3 seeds:
//   elmo-exp sweep experiments/ablations/gap_main.jsonnet
(import '../lib/ablations.libsonnet').main('gap') {
  variants: { baseline: { config: '../gap_baseline.jsonnet' }, elmo: {} },
}
