"""Fills the component registry: ``load()`` imports every module that registers components.

The entry points call it once, before any lookup: the ``elmo-exp`` command, the Python API
(``elmo_experiments.api``), ``elmo-exp serve``'s app, the spaCy factories and
``elmo_experiments.testing``. No module below them imports this one, so the framework's own
modules form no import circle through the registry. The framework's components are listed here;
each task's come from its folder (``elmo_experiments/tasks/<task>/components.py``, found by
``tasks.load_tasks``: a new task folder needs no line here); components from outside the package
come from installed plugins (``elmo_experiments.plugins``), loaded last.
"""

from __future__ import annotations

from elmo_experiments.config import registry


def load() -> None:
    """Register every component (once per process)."""
    if registry.filled():
        return
    from elmo_experiments.bilm import characters, elmo_embedder  # noqa: F401
    from elmo_experiments.bilm.pretraining import lm_model  # noqa: F401
    from elmo_experiments.data import token_indexers  # noqa: F401
    from elmo_experiments.data.readers import column_tagging  # noqa: F401
    from elmo_experiments.modules import alternating_lstm, encoders  # noqa: F401
    from elmo_experiments.modules.embedders import (  # noqa: F401
        char_cnn,
        transformer,
        word_embedding,
    )
    from elmo_experiments.plugins import load_entry_points
    from elmo_experiments.tasks import load_tasks
    from elmo_experiments.training import callbacks, optimizers  # noqa: F401

    load_tasks()
    registry.mark_filled()  # before the plugins: a plugin may look up what it builds on
    load_entry_points()
