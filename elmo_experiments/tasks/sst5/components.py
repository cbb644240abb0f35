"""SST-5's components: the sst reader and the bcn model (its metric is accuracy: no official
scorer). The framework imports this module for every task folder."""

from elmo_experiments.tasks.sst5 import model, reader, serving  # noqa: F401  (registered)
