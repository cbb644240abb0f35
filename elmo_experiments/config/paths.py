"""Paths in a config made absolute when a run starts, so that its ``config.json`` (and its
archive) work from any working directory; and the project's own files (the embedded samples,
the experiment configs, the shipped biLMs) written as ``{project}/...`` in what a run stores,
so that it resumes and its archive loads from a checkout elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elmo_experiments.config.loader import PROJECT_ROOT

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


PROJECT = "{project}"  # stands for the checkout's root in a stored config
PROJECT_FOLDERS = ("reproduction", "experiments", "elmo_experiments")  # what the project ships
# a shipped folder's earlier name -> its name now, for configs stored before it was renamed
RENAMED_FOLDERS = {"tasks": "reproduction"}


def _map_paths(config: Any, change: Any) -> Any:
    if isinstance(config, dict):
        return {key: change(value) if key in PATH_KEYS and isinstance(value, str)
                else _map_paths(value, change) for key, value in config.items()}
    if isinstance(config, list):
        return [_map_paths(value, change) for value in config]
    return config


def _portable(value: str) -> str:
    path = Path(value)
    if not path.is_absolute():
        return value
    try:
        relative = path.relative_to(PROJECT_ROOT)
    except ValueError:
        return value
    if not relative.parts or relative.parts[0] not in PROJECT_FOLDERS:
        return value  # e.g. runs/ or data/ inside the checkout: not the project's own files
    return f"{PROJECT}/{relative.as_posix()}"


def _resolved(value: str) -> str:
    if value == PROJECT or value.startswith(PROJECT + "/"):
        first, _, rest = value[len(PROJECT) + 1:].partition("/")
        return str(PROJECT_ROOT / RENAMED_FOLDERS.get(first, first) / rest)
    return value


def portable_paths(config: Any) -> Any:
    """A copy of ``config`` with every path into the project's shipped folders written as
    ``{project}/...`` (how a run stores its config)."""
    return _map_paths(config, _portable)


def project_paths(config: Any) -> Any:
    """A copy of a stored ``config`` with ``{project}/...`` paths made absolute for this
    checkout (configs stored before that, with absolute paths, are returned as they are)."""
    return _map_paths(config, _resolved)
