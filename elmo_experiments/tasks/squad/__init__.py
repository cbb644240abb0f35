"""SQuAD v1.1 (question answering): the squad reader, the bidaf model, the squad metric and
`elmo-exp score squad`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""

from elmo_experiments.deprecation import moved_names

# the module elmo_experiments.tasks.squad of the previous release is metric.py now
__getattr__ = moved_names(__name__, "elmo_experiments.tasks.squad.metric")
