"""Paths in a config made absolute when a run starts, so that its ``config.json`` (and its
archive) work from any working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# every parameter whose value is a path to read (or, for disk_dir, to write)
PATH_KEYS = frozenset({"train_data_path", "validation_data_path", "test_data_path", "weights",
                       "options_file", "weight_file", "pretrained_file", "warmup_file",
                       "disk_dir", "prepared_dir", "path"})


def _absolute(key: str, value: str) -> str:
    path = Path(value).expanduser()
    if path.is_absolute():
        return str(path)
    if key == "disk_dir" or path.exists() or path.with_name(path.name + ".gz").exists():
        return str(path.resolve())
    return value  # a name (a shipped or released biLM) or a path that does not exist yet


def absolute_paths(config: Any) -> Any:
    """A copy of ``config`` with every relative path that exists here made absolute."""
    if isinstance(config, dict):
        return {key: _absolute(key, value) if key in PATH_KEYS and isinstance(value, str)
                else absolute_paths(value) for key, value in config.items()}
    if isinstance(config, list):
        return [absolute_paths(value) for value in config]
    return config
