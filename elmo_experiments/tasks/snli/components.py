"""SNLI's components: the snli reader and the esim model (its metric is accuracy: no official
scorer). The framework imports this module for every task folder."""

from elmo_experiments.tasks.snli import model, reader, serving  # noqa: F401  (registered)
