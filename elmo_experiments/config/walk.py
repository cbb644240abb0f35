"""Walks over a resolved config: the component configs of one ``type``."""

from __future__ import annotations

from typing import Any


def configs_of_type(config: Any, kind: str) -> list[dict[str, Any]]:
    """Every component config of ``type: kind`` in ``config``, in document order."""
    if isinstance(config, dict):
        found = [config] if config.get("type") == kind else []
        return found + [c for value in config.values() for c in configs_of_type(value, kind)]
    if isinstance(config, list):
        return [c for value in config for c in configs_of_type(value, kind)]
    return []
