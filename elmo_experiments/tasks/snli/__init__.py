"""SNLI (textual entailment): the snli reader and the esim model.

reader.py, model.py; components.py registers them (the framework imports it).
"""
