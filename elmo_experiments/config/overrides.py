"""Command-line overrides: `-o '{"trainer": {"num_epochs": 1}}'` and `-o trainer.num_epochs=1`."""

from __future__ import annotations

import copy
import json
from typing import Any

from elmo_experiments.data.files import TOO_DEEP
from elmo_experiments.errors import ConfigError


def deep_merge(base: Any, update: Any) -> Any:
    """Merge ``update`` into ``base`` recursively; objects merge, everything else replaces."""
    if isinstance(base, dict) and isinstance(update, dict):
        merged = dict(base)
        for key, value in update.items():
            merged[key] = deep_merge(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(update)


def _parse_value(text: str, override: str, source: str) -> Any:
    """The JSON value of ``text``, or ``text`` itself when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
    except RecursionError:
        raise ConfigError([f"-o {override!r}: {TOO_DEEP}"], source) from None


def _dotted_to_nested(config: dict[str, Any], dotted: str, value: Any, source: str) -> None:
    keys = dotted.split(".")
    node: Any = config
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        where = ".".join(keys[: depth + 1])
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise ConfigError([f"{where}: index {key!r} out of range"], source=source)
            if last:
                node[int(key)] = value
            else:
                node = node[int(key)]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
        else:
            raise ConfigError([f"{where}: cannot override inside a {type(node).__name__}"], source)


def apply_overrides(config: dict[str, Any], overrides: list[str], source: str) -> dict[str, Any]:
    """Apply overrides in order; a JSON object merges, ``path=value`` sets one key."""
    result = copy.deepcopy(config)
    for override in overrides:
        stripped = override.strip()
        if stripped.startswith("{"):
            try:
                update = json.loads(stripped)
            except json.JSONDecodeError as error:
                raise ConfigError([f"-o {override!r}: invalid JSON ({error})"], source) from None
            except RecursionError:
                raise ConfigError([f"-o {override!r}: {TOO_DEEP}"], source) from None
            result = deep_merge(result, update)
            continue
        dotted, sep, value = stripped.partition("=")
        if not sep or not dotted:
            raise ConfigError([f"-o {override!r}: expected JSON or path=value"], source)
        _dotted_to_nested(result, dotted.strip(), _parse_value(value.strip(), override, source),
                          source)
    return result
