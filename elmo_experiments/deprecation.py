"""Old module paths that keep working for one release, with a ``DeprecationWarning``.

A module that moved leaves a two-line shim at its old path::

    from elmo_experiments.tasks.ner import reader as _moved
    moved_module(__name__, _moved)

Importing the old path warns once and gives the new module itself (the same objects, so
``isinstance`` checks and registry entries agree).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any


def moved_module(old: str, new: ModuleType) -> None:
    """Make the module ``old`` (the shim being imported) the module ``new``, with a warning."""
    warnings.warn(f"{old} is deprecated: import {new.__name__} (this path goes in the next "
                  f"release)", DeprecationWarning, stacklevel=3)
    sys.modules[old] = new


def moved_names(old: str, new: str) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` for the names that the module ``old`` had, which now
    live in the module ``new`` (imported when one is first asked for)."""

    def __getattr__(name: str) -> Any:
        import importlib

        module = importlib.import_module(new)
        if name.startswith("__") or not hasattr(module, name):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} is deprecated: import it from {new} (this path goes in "
                      f"the next release)", DeprecationWarning, stacklevel=2)
        return getattr(module, name)

    return __getattr__
