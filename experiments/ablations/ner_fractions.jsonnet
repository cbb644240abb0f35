// Figure 1 for NER: 1%, 10%, 100% of CoNLL-2003 train, baseline vs ELMo
(import '../lib/ablations.libsonnet').fractions('ner')
