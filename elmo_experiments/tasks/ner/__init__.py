"""NER (CoNLL-2003): the conll2003 reader, the crf_tagger model, the conlleval metric and `elmo-exp
score ner`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""
