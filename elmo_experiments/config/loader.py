"""Evaluate jsonnet experiment files: imports, ext vars, environment variables, overrides."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from elmo_experiments.config.overrides import apply_overrides
from elmo_experiments.errors import ConfigError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LIBRARY_DIR = PROJECT_ROOT / "experiments" / "lib"


def _native_callbacks(variables: dict[str, str], reads: dict[str, str] | None
                      ) -> dict[str, tuple[tuple[str, ...], Any]]:
    """Functions callable from jsonnet as ``std.native("name")(...)``; ``env`` reads the
    environment merged with the ext vars, and notes each name it was asked for in ``reads``."""

    def env(variable: str) -> str:
        value = variables.get(variable, "")
        if reads is not None:
            reads[variable] = value
        return value

    def project_path(relative: str) -> str:
        return str(PROJECT_ROOT / relative)

    return {"env": (("variable",), env), "project_path": (("relative",), project_path)}


_FRAME_LOCATION = re.compile(r"^\t(\S+:\(?\d+[\d:()-]*)\t")


def _first_line(message: str) -> str:
    """The error's first line; a runtime error gets its innermost user file:line:col appended."""
    lines = [line for line in message.splitlines() if line.strip()]
    if not lines:
        return message.strip()
    first = lines[0].strip()
    for line in lines[1:]:
        match = _FRAME_LOCATION.match(line + "\t")
        if match and not match.group(1).startswith("std.jsonnet:"):
            return f"{first} (at {match.group(1)})"
    return first


def evaluate_jsonnet(path: str | Path, ext_vars: dict[str, str] | None = None,
                     reads: dict[str, str] | None = None) -> dict[str, Any]:
    """Evaluate a jsonnet file into a dict.

    Imports resolve relative to the importing file, then in ``experiments/lib``. Environment
    variables are visible as ext vars and through ``std.native("env")(name)`` (an empty string
    when unset); explicit ``ext_vars`` win in both. ``reads`` collects the names ``env`` was
    asked for and their values (a run records them). Native functions take one argument: the
    jsonnet 0.22 binding mis-binds multi-parameter native callbacks.
    """
    import _jsonnet

    path = Path(path)
    if not path.is_file():
        raise ConfigError([f"no such config file: {path}"], source=str(path))
    variables = dict(os.environ)
    variables.update(ext_vars or {})
    try:
        text = _jsonnet.evaluate_file(
            str(path),
            jpathdir=[str(LIBRARY_DIR)],
            ext_vars=variables,
            native_callbacks=_native_callbacks(variables, reads),
        )
    except RuntimeError as error:
        raise ConfigError([_first_line(str(error))], source=str(path)) from None
    config = json.loads(text)
    if not isinstance(config, dict):
        raise ConfigError(["the config must evaluate to an object"], source=str(path))
    return config


def load_config(
    path: str | Path,
    ext_vars: dict[str, str] | None = None,
    overrides: list[str] | None = None,
    reads: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Evaluate ``path`` and apply ``-o`` overrides in order (JSON objects or ``a.b=value``)."""
    config = evaluate_jsonnet(path, ext_vars, reads)
    return apply_overrides(config, overrides or [], source=str(path))


def parse_ext_vars(pairs: list[str]) -> dict[str, str]:
    """Parse ``--ext-var name=value`` arguments."""
    result: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError([f"--ext-var {pair!r}: expected name=value"], source="command line")
        result[name] = value
    return result
