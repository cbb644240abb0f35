"""SRL (CoNLL-2005/2012): the srl readers, the srl_tagger model, the srl_eval metric and `elmo-exp
score srl`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""
