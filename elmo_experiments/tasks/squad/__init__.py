"""SQuAD v1.1 (question answering): the squad reader, the bidaf model, the squad metric and
`elmo-exp score squad`.

reader.py, model.py, metric.py; components.py registers them (the framework imports it).
"""
