"""SRL (CoNLL-2005/2012): the srl readers, the srl_tagger model, the srl_eval metric and `elmo-exp
score srl`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""

from elmo_experiments.deprecation import moved_names

# the module elmo_experiments.tasks.srl of the previous release is metric.py now
__getattr__ = moved_names(__name__, "elmo_experiments.tasks.srl.metric")
