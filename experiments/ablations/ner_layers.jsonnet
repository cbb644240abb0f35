// Table 2 for NER (CoNLL-2003 dev): elmo-exp sweep experiments/ablations/ner_layers.jsonnet
(import '../lib/ablations.libsonnet').layers('ner', 1)
