"""The tests' one way to import a script that lives outside the package (a task's
``make_sample.py``, ``reproduction/squad/alignment.py``, ...) as a module."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """The script at ``path``, executed as a module named ``name`` (default: its stem)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
