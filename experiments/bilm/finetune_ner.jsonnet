// Domain fine-tuning (Peters et al. 2018, suppl. A.1): continue a biLM on the NER training text (labels
// ignored) for one pass, then use it frozen in experiments/ner.jsonnet.
//   ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_ner.jsonnet \
//       -s runs/bilm_ner --init-from runs/bilm_small/bilm
//   ELMO_WEIGHTS=runs/bilm_ner/bilm ELMO_DATA_DIR=/path/to/data elmo-exp train experiments/ner.jsonnet -s runs/ner_elmo_ft
// The architecture must be the one of the --init-from biLM (here: small.jsonnet's); its softmax
// vocabulary and weights carry over (corpus.vocab_size applies only without --init-from).
local data = import 'data.libsonnet';
local small = import 'small.jsonnet';

small {
  corpus: {
    train: [{ path: data.path('ner_conll2003/eng.train', 'tasks/ner/sample/train.txt'),
              format: 'conll' }],
    evaluation: [{ name: 'ner_dev', format: 'conll',
                   path: data.path('ner_conll2003/eng.testa', 'tasks/ner/sample/dev.txt') }],
    heldout_every: 20,
    max_sentence_length: 60,
    vocab_size: 50000,
    min_count: 1,
    prepared_dir: null,
  },
  data_loader: { batch_size: 64, batches_per_epoch: null, max_eval_sentences: 2000 },
  trainer+: { num_epochs: 1, learning_rate_scheduler: null, optimizer: { type: 'adam', lr: 0.001 } },
}
