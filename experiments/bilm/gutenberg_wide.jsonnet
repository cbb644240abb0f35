// A further lever for ELMo's gain (where fine-tuning on a task's text did not make it stand out
// of seed noise): continue the shipped biLM on a wider, still shareable corpus, in bf16 where the
// CPU multiplies bf16 natively (AVX-512 BF16, AMX; elsewhere it runs in fp32, with a warning).
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/gutenberg_wide.jsonnet \
//       -s runs/bilm_wide --init-from gutenberg
//   (interrupted? the same command with --recover resumes it)
// then use it: ELMO_WEIGHTS=runs/bilm_wide/bilm (the elmo_wide variant of ner_main, sst5_main).
// Corpus: the 100 Gutenberg novels (LitBank's excerpts cut out, as for `gutenberg`), plus modern
// text under CC BY-SA 4.0: SQuAD v1.1's training paragraphs and questions (Wikipedia) and the
// UD English Web Treebank's training sentences (weblogs, reviews, e-mail). No dev or test text of
// any task is read. The architecture and the softmax vocabulary come from --init-from.
local data = import 'data.libsonnet';
local project = std.native('project_path');
local sample = 'reproduction/bilm/sample/';

{
  corpus: {
    train: (if data.root == '' then [
              { path: data.path('', sample + 'story.txt'), format: 'raw' },
            ] else [
              { path: data.root + '/lm_corpus/gutenberg', format: 'raw',
                exclude: data.root + '/coref_litbank/conll' },
              { path: data.root + '/pos/ud_english_ewt/en_ewt-ud-train.conllu.gz',
                format: 'conllu' },
            ]) + [
      { path: project('experiments/squad.jsonnet'), format: 'experiment', split: 'train',
        ext_vars: { ELMO_SIZE: 'paper' } },
    ],
    evaluation: if data.root == '' then [
      { name: 'sample_heldout', path: data.path('', sample + 'heldout.txt') },
    ] else [
      { name: 'litbank', path: data.root + '/coref_litbank/conll', format: 'conll2012' },
    ],
    heldout_every: 100,
    max_sentence_length: 60,
    prepared_dir: null,
  },
  // the continued biLM's dropout and sampled softmax, as in pretraining (gutenberg.jsonnet)
  model: { type: 'bilm_lm', dropout: 0.1, num_samples: 4096 },
  data_loader: { batch_size: 64, batches_per_epoch: 500, max_eval_sentences: 2000 },
  trainer: {
    num_epochs: 6,
    amp: 'bf16',
    validation_metric: '-perplexity',
    grad_norm: 10.0,
    optimizer: { type: 'adam', lr: 0.001, fused: true },
    learning_rate_scheduler: { type: 'reduce_on_plateau', factor: 0.5, patience: 1 },
  },
  random_seed: 13370,
}
