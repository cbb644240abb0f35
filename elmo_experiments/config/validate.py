"""Validate a whole config against the registry, collecting every problem with its path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elmo_experiments.config.registry import REQUIRED, Param, Spec, lookup, suggest
from elmo_experiments.data.files import data_file_problem, file_problem

FILE_CHECKS = (file_problem, data_file_problem)  # what Validator(check_files=False) skips

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "a boolean",
               list: "a list", dict: "an object"}


def _type_ok(value: Any, kind: type | tuple[type, ...] | None) -> bool:
    if kind is None:
        return True
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if k is bool and isinstance(value, bool):
            return True
        if k is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if k is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if k not in (bool, int, float) and isinstance(value, k):
            return True
    return False


def _describe(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Validator:
    """Walks a config; ``problems`` collects one line per mistake. ``check_files=False``
    leaves out the checks that a file exists (for a reader of the config's data alone)."""

    def __init__(self, check_files: bool = True) -> None:
        self.problems: list[str] = []
        self.check_files = check_files

    def fields(self, config: Any, params: tuple[Param, ...], path: str) -> dict[str, Any]:
        """Check an object against declared params; return values with defaults filled in."""
        if not isinstance(config, Mapping):
            self.problems.append(f"{path or '<top>'}: expected an object, got {config!r}")
            return {}
        known = {p.name: p for p in params}
        for key in config:
            if key not in known:
                where = _join(path, key)
                self.problems.append(f"{where}: unknown parameter{suggest(key, sorted(known))}")
        values: dict[str, Any] = {}
        for param in params:
            where = _join(path, param.name)
            if param.name not in config:
                if param.required:
                    self.problems.append(f"{where}: missing required parameter")
                elif param.fields is not None and param.default is not None:
                    values[param.name] = self.value(param.default, param, where)
                    continue
                values[param.name] = None if param.default is REQUIRED else param.default
                continue
            values[param.name] = self.value(config[param.name], param, where)
        return values

    def value(self, value: Any, param: Param, path: str) -> Any:
        if value is None and param.default is None:
            return None
        if param.component is not None:
            if param.mapping:
                if not isinstance(value, dict):
                    self.problems.append(f"{path}: expected an object of {param.component}s")
                    return {}
                return {k: self.component(v, param.component, _join(path, k))
                        for k, v in value.items()}
            if param.sequence:
                if not isinstance(value, list):
                    self.problems.append(f"{path}: expected a list of {param.component}s")
                    return []
                return [self.component(v, param.component, f"{path}.{i}")
                        for i, v in enumerate(value)]
            return self.component(value, param.component, path)
        if param.fields is not None and param.sequence:
            if not isinstance(value, list | tuple):  # a JSON list, or a builder's default
                self.problems.append(f"{path}: expected a list of objects, got {value!r}")
                return []
            return [self.fields(v, param.fields, f"{path}.{i}") for i, v in enumerate(value)]
        if param.fields is not None:
            return self.fields(value, param.fields, path)
        if not _type_ok(value, param.kind):
            assert param.kind is not None
            self.problems.append(f"{path}: expected {_describe(param.kind)}, got {value!r}")
            return value
        if param.choices is not None and value not in param.choices:
            hint = suggest(str(value), [str(c) for c in param.choices])
            options = ", ".join(repr(c) for c in param.choices)
            self.problems.append(f"{path}: {value!r} is not one of {options}{hint}")
        if param.bounds is not None:
            low, high = param.bounds
            numbers = value if isinstance(value, list) else [value]
            outside = [v for v in numbers if isinstance(v, int | float) and not low <= v <= high]
            if outside:
                self.problems.append(f"{path}: {outside[0]!r} is outside [{low}, {high}]")
        if param.check is not None and (self.check_files or param.check not in FILE_CHECKS):
            problem = param.check(value)
            if problem:
                self.problems.append(f"{path}: {problem}")
        return value

    def component(self, config: Any, category: str, path: str) -> Spec | None:
        if not isinstance(config, dict):
            self.problems.append(f"{path}: expected an object with a \"type\", got {config!r}")
            return None
        name = config.get("type")
        if not isinstance(name, str):
            self.problems.append(f"{_join(path, 'type')}: missing {category} type")
            return None
        entry = lookup(category, name)
        if isinstance(entry, str):
            self.problems.append(f"{_join(path, 'type')}: {entry}")
            return None
        rest = {k: v for k, v in config.items() if k != "type"}
        values = self.fields(rest, entry.params, path)
        problem = entry.check(values) if entry.check is not None else None
        if problem:
            self.problems.append(f"{path}: {problem}")
        return Spec(entry, values, path, raw=config)
