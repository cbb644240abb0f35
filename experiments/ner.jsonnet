// NER with ELMo at the input: BiLSTM-CRF on CoNLL-2003 (Peters et al. 2018, §4), λ = 0.1, dropout 0.5.
//   ELMO_WEIGHTS=/path/to/bilm elmo-exp train experiments/ner.jsonnet -s runs/ner
//   ELMO_DATA_DIR=/path/to/data ELMO_WEIGHTS=... elmo-exp train experiments/ner.jsonnet -s runs/ner
// Paper (original biLM, test F1): 92.22 ± 0.10; baseline 90.15.
// Our measured figures: reproduction/ner/README.md and the README's results (generated from results/).
// ELMo at the output too: -o 'model.token_embedders.elmo.mixes=[{"l2":0.1},{"l2":0.1}]'.
local base = import 'ner_baseline.jsonnet';
local elmo = import 'elmo.libsonnet';

base {
  dataset_reader+: { token_indexers+: { elmo: elmo.indexer } },
  model+: {
    // the activations of CoNLL-2003's 300k tokens stay in memory (6 KB a token, shipped biLM)
    token_embedders+: { elmo: elmo.embedder(mixes=[elmo.mix(l2=0.1)], dropout=0.5) {
      cache: { memory_mb: 3072 },
    } },
  },
}
