"""Imports every module that registers components, so the registry is complete.

The framework's own components are listed here explicitly; each task's come from its folder
(``elmo_experiments/tasks/<task>/components.py``, found by ``tasks.load_tasks``: a new task
folder needs no line here). Components from outside the package come from installed plugins
(``elmo_experiments.plugins``), loaded last.
"""

from elmo_experiments.bilm import characters, elmo_embedder  # noqa: F401
from elmo_experiments.bilm.pretraining import lm_model  # noqa: F401
from elmo_experiments.data import token_indexers  # noqa: F401
from elmo_experiments.data.readers import column_tagging  # noqa: F401
from elmo_experiments.modules import alternating_lstm, encoders  # noqa: F401
from elmo_experiments.modules.embedders import char_cnn, transformer, word_embedding  # noqa: F401
from elmo_experiments.plugins import load_entry_points
from elmo_experiments.tasks import load_tasks
from elmo_experiments.training import callbacks, optimizers  # noqa: F401

load_tasks()
load_entry_points()
