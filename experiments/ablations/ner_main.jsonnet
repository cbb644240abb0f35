// Table 1 for NER: baseline vs ELMo, 3 seeds: elmo-exp sweep experiments/ablations/ner_main.jsonnet
(import '../lib/ablations.libsonnet').main('ner', levers=['elmo_wide'])
