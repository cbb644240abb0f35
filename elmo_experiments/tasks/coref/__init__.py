"""Coreference (CoNLL-2012 format): the coref_conll2012 reader, the coref model, the conll_coref
metric and `elmo-exp score coref`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""

from elmo_experiments.deprecation import moved_names

# the module elmo_experiments.tasks.coref of the previous release is metric.py now
__getattr__ = moved_names(__name__, "elmo_experiments.tasks.coref.metric")
