"""Walks over a resolved config: the component configs of one ``type``, or of every type that
reads external files."""

from __future__ import annotations

from typing import Any

from elmo_experiments.config.external import ExternalFiles
from elmo_experiments.config.registry import categories, entries


def configs_of_type(config: Any, kind: str) -> list[dict[str, Any]]:
    """Every component config of ``type: kind`` in ``config``, in document order."""
    if isinstance(config, dict):
        found = [config] if config.get("type") == kind else []
        return found + [c for value in config.values() for c in configs_of_type(value, kind)]
    if isinstance(config, list):
        return [c for value in config for c in configs_of_type(value, kind)]
    return []


def declared_external_files() -> dict[str, ExternalFiles]:
    """Component type -> the external files it declares, over the whole registry."""
    return {name: entry.external_files for category in categories()
            for name, entry in entries(category).items() if entry.external_files is not None}


def external_configs(config: Any, group: str) -> list[tuple[ExternalFiles, dict[str, Any]]]:
    """Every component config in ``config`` whose type declares external files of ``group``,
    with its declaration, in document order."""
    declared = {name: files for name, files in declared_external_files().items()
                if files.group == group}
    found: list[tuple[ExternalFiles, dict[str, Any]]] = []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            kind = value.get("type")
            if isinstance(kind, str) and kind in declared:
                found.append((declared[kind], value))
            for inner in value.values():
                visit(inner)
        elif isinstance(value, list):
            for inner in value:
                visit(inner)

    visit(config)
    return found


def external_groups() -> list[str]:
    """The ``group`` of every declaration of external files, sorted."""
    return sorted({files.group for files in declared_external_files().values()})
