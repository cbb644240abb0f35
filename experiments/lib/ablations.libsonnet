// Sweep specs for the paper's ablations (elmo-exp sweep experiments/ablations/<spec>.jsonnet).
// Tables 2 and 3 and Figure 1 are on the development sets, as in the paper.
local mixes(n, mix) = std.manifestJsonMinified([mix for _ in std.range(1, n)]);
{
  seeds: [1, 2, 3],
  // Table 1: the task's baseline, its ELMo config as shipped, and the same with a pretrained
  // transformer in ELMo's place (test sets).
  main(task, ext_vars={}):: {
    name: task + '_main',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: {
      baseline: { config: '../' + task + '_baseline.jsonnet' },
      elmo: {},
      transformer: { config: '../' + task + '_transformer.jsonnet' },
    },
    seeds: $.seeds,
  },
  // Table 2: how the biLM layers are combined. `n`: the task's number of mixes (placements).
  layers(task, n, ext_vars={}):: {
    name: task + '_layers',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: {
      baseline: { config: '../' + task + '_baseline.jsonnet' },
      last: { overrides: ['model.token_embedders.elmo.mixes=' + mixes(n, { mode: 'last' })] },
      'lambda1': { overrides: ['model.token_embedders.elmo.mixes=' +
                               mixes(n, { mode: 'learned', l2: 1.0 })] },
      'lambda0.001': { overrides: ['model.token_embedders.elmo.mixes=' +
                                   mixes(n, { mode: 'learned', l2: 0.001 })] },
    },
    seeds: $.seeds,
  },
  // Table 3: where ELMo goes. `mix`: the task's own mix settings (its λ, layer norm).
  placement(task, mix, ext_vars={}):: {
    name: task + '_placement',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: {
      input: { overrides: ['model.token_embedders.elmo.mixes=' + mixes(1, mix),
                           'model.token_embedders.elmo.at_input=true'] },
      input_output: { overrides: ['model.token_embedders.elmo.mixes=' + mixes(2, mix),
                                  'model.token_embedders.elmo.at_input=true'] },
      output: { overrides: ['model.token_embedders.elmo.mixes=' + mixes(1, mix),
                            'model.token_embedders.elmo.at_input=false'] },
    },
    seeds: $.seeds,
  },
  // Figure 1: sample efficiency, baseline vs ELMo on shares of the training data.
  fractions(task, fractions=[0.01, 0.1, 1.0], ext_vars={}):: {
    name: task + '_fractions',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: {
      baseline: { config: '../' + task + '_baseline.jsonnet' },
      elmo: {},
    },
    seeds: $.seeds,
    fractions: fractions,
  },
}
