"""Deprecated: moved to ``elmo_experiments.tasks.snli.reader`` (a task is one folder); this path
goes in the next release."""

from elmo_experiments.deprecation import moved_module
from elmo_experiments.tasks.snli import reader as _moved

moved_module(__name__, _moved)
