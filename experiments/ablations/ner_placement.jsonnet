// Table 3 for NER: elmo-exp sweep experiments/ablations/ner_placement.jsonnet
(import '../lib/ablations.libsonnet').placement('ner', { mode: 'learned', l2: 0.1 })
