// SNLI with ELMo at the input and the output of the encoding BiLSTM, layer norm, λ = 0.001,
// L2 1e-4 on the weight matrices, 50% dropout after the attention (Peters et al. 2018, section 4).
//   ELMO_WEIGHTS=/path/to/bilm elmo-exp train experiments/snli.jsonnet -s runs/snli
//   ELMO_DATA_DIR=/path/to/data ELMO_WEIGHTS=... elmo-exp train experiments/snli.jsonnet -s runs/snli
// ELMo at one placement: -o 'model.token_embedders.elmo.mixes=[{"l2":0.001,"layer_norm":true}]'
// (input only), plus -o model.token_embedders.elmo.at_input=false (output only).
// CPU-sized variant: ELMO_SIZE=cpu. Paper (full train, test accuracy): 88.7 ± 0.17; baseline 88.0.
// Our measured figures: reproduction/snli/README.md.
local snli = import 'snli.libsonnet';
local elmo = import 'elmo.libsonnet';

local mix = elmo.mix(l2=0.001, layer_norm=true);

snli.paths {
  dataset_reader: snli.reader(snli.indexers { elmo: elmo.indexer }),
  evaluate_on_test: true,
  random_seed: 13370,
  // ESIM drops every LSTM input (variational 0.5) and the attention output (0.5), ELMo
  // included: no second ELMo dropout.
  // The activations of the CPU variant's sentences (1% of train and the development set, about
  // 340k tokens, 6 KB a token with the shipped biLM) stay in memory, so that later epochs skip
  // the biLM; with all of train, the first 4 GB of sentences do.
  model: snli.model({ tokens: snli.word_embedding,
                      elmo: elmo.embedder(mixes=[mix, mix], dropout=0.0) {
                        cache: { memory_mb: 4096 },
                      } },
                    attention_dropout=0.5, weight_l2=0.0001),
  data_loader: snli.data_loader,
  trainer: snli.trainer,
}
