// Sweep specs for the paper's ablations (elmo-exp sweep experiments/ablations/<spec>.jsonnet).
// Tables 2 and 3 and Figure 1 are on the development sets, as in the paper.
// A cell that is the very run of Table 1 (the baseline, the ELMo config as shipped, the 100%
// points of Figure 1) is not run again: `same_as` names it in the task's main sweep, whose
// results the tables show there (loading the spec checks that the runs are identical).
local mixes(n, mix) = std.manifestJsonMinified([mix for _ in std.range(1, n)]);
local main_baseline(task) = { config: '../' + task + '_baseline.jsonnet',
                              same_as: task + '_main.jsonnet:baseline' };
local main_elmo(task) = { same_as: task + '_main.jsonnet:elmo' };
{
  seeds: [1, 2, 3],
  // Table 1: the task's baseline, its ELMo config as shipped, the same with the biLM first
  // fine-tuned on the task's training text (supplement A.1; made beforehand by
  //   elmo-exp pretrain experiments/bilm/finetune_<task>.jsonnet -s runs/bilm_finetuned/<task>
  //       --init-from gutenberg
  // from the project's root, where the sweep runs), and a pretrained transformer in ELMo's
  // place (test sets).
  // `levers`: further variants (below) where fine-tuning left ELMo's gain within seed noise.
  main(task, ext_vars={}, levers=[]):: {
    name: task + '_main',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: {
      baseline: { config: '../' + task + '_baseline.jsonnet' },
      elmo: {},
      elmo_finetuned: { ext_vars: { ELMO_WEIGHTS: 'runs/bilm_finetuned/' + task + '/bilm' } },
      transformer: { config: '../' + task + '_transformer.jsonnet' },
    } + { [lever]: $.levers[lever] for lever in levers },
    seeds: $.seeds,
  },
  // Further levers (the README's "Further levers" table), each a biLM made beforehand:
  //   elmo_wide: the shipped biLM continued on Gutenberg plus modern CC BY-SA text, in bf16:
  //     elmo-exp pretrain experiments/bilm/gutenberg_wide.jsonnet -s runs/bilm_wide \
  //         --init-from gutenberg
  levers:: {
    elmo_wide: { ext_vars: { ELMO_WEIGHTS: 'runs/bilm_wide/bilm' } },
  },
  // Table 2: how the biLM layers are combined. `n`: the task's number of mixes (placements);
  // `shipped`: the column that is the task's ELMo config as shipped (its λ, no layer norm).
  layers(task, n, ext_vars={}, shipped=null):: {
    local learned(l2) = { overrides: ['model.token_embedders.elmo.mixes=' +
                                      mixes(n, { mode: 'learned', l2: l2 })] },
    name: task + '_layers',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: {
      baseline: main_baseline(task),
      last: { overrides: ['model.token_embedders.elmo.mixes=' + mixes(n, { mode: 'last' })] },
      'lambda1': if shipped == 'lambda1' then main_elmo(task) else learned(1.0),
      'lambda0.001': if shipped == 'lambda0.001' then main_elmo(task) else learned(0.001),
    },
    seeds: $.seeds,
  },
  // Table 3: where ELMo goes. `mix`: the task's own mix settings (its λ, layer norm);
  // `shipped`: the placement of its ELMo config as shipped.
  placement(task, mix, ext_vars={}, shipped='input'):: {
    local placed(n, at_input) = { overrides: ['model.token_embedders.elmo.mixes=' + mixes(n, mix),
                                              'model.token_embedders.elmo.at_input=' + at_input] },
    local own = { input: placed(1, 'true'), input_output: placed(2, 'true'),
                  output: placed(1, 'false') },
    name: task + '_placement',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: own { [shipped]: main_elmo(task) },
    seeds: $.seeds,
  },
  // Figure 1: sample efficiency, baseline vs ELMo on shares of the training data.
  fractions(task, fractions=[0.01, 0.1, 1.0], ext_vars={}):: {
    name: task + '_fractions',
    config: '../' + task + '.jsonnet',
    ext_vars: ext_vars,
    variants: { baseline: main_baseline(task), elmo: main_elmo(task) },  // 100%: Table 1's
    seeds: $.seeds,
    fractions: fractions,
  },
}
