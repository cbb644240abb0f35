"""NER (CoNLL-2003): the conll2003 reader, the crf_tagger model, the conlleval metric and `elmo-exp
score ner`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""

from elmo_experiments.deprecation import moved_names

# the module elmo_experiments.tasks.ner of the previous release is metric.py now
__getattr__ = moved_names(__name__, "elmo_experiments.tasks.ner.metric")
