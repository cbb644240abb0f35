"""The tasks, one folder each: ``tasks/<task>/`` holds the task's reader(s), model, metric and
official scorer, and ``components.py``, which registers them. The list of tasks is the list of
these folders: nothing names them elsewhere (``elmo-exp score``, the tables and the registry
find them here). Formats and model parts that several tasks share stay in ``data/`` and
``modules/``.
"""

from __future__ import annotations

import importlib
import pkgutil

from elmo_experiments.errors import PluginError

REGISTRATION_MODULE = "components"  # in each task folder: imports (registers) its components


def task_names() -> list[str]:
    """Every task folder's name, sorted (nothing is imported)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)


def load_tasks() -> None:
    """Import every task folder's registration module (once per process: imports are cached)."""
    for name in task_names():
        module = f"{__name__}.{name}.{REGISTRATION_MODULE}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
            raise PluginError(f"task folder elmo_experiments/tasks/{name}/ has no "
                              f"{REGISTRATION_MODULE}.py (it registers the task's "
                              f"components)") from None
