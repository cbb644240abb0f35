// The paper's original biLM size (2 x 4096 cells, 512 projections, 2048 filters, 2 highway
// layers; about 93.6M parameters without the softmax), for users with a GPU and a large corpus.
//   ELMO_DATA_DIR=/data elmo-exp pretrain experiments/bilm/original.jsonnet -s runs/bilm_original
// bilm-tf trained it 10 epochs on the 1B Word Benchmark with Adagrad (lr 0.2), batches of 128
// sentences and an 8192-sample softmax; point corpus.train at your corpus with -o or a copy of
// this file. Paper: average forward/backward perplexity 39.7 on the 1B Word Benchmark.
local bilm = import 'bilm.libsonnet';
local small = import 'small.jsonnet';

small {
  corpus+: { vocab_size: 793471, min_count: 3, max_sentence_length: 100 },
  model: bilm.original { type: 'bilm_lm', dropout: 0.1, num_samples: 8192 },
  data_loader: { batch_size: 128, batches_per_epoch: null, max_eval_sentences: 10000 },
  trainer: bilm.trainer(epochs=10, lr=0.2) { device: 'cuda' },
}
