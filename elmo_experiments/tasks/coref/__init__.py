"""Coreference (CoNLL-2012 format): the coref_conll2012 reader, the coref model, the conll_coref
metric and `elmo-exp score coref`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""
