"""``run.json``: what produced a run directory, so that a result can be traced and repeated.

Written when a run starts (or resumes: each start is one entry of ``sessions``) and completed
when it ends: the source config and its SHA-256, the ``-o`` overrides and ext vars, the
environment variables the config read, the code's commit, package, torch and Python versions,
the host, and the digest of every external file the config names (pretrained weights, word
vectors).
"""

from __future__ import annotations

import platform
import socket
import time
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.config.walk import external_configs, external_groups
from elmo_experiments.data.files import read_json, sha256_of
from elmo_experiments.errors import DataError
from elmo_experiments.training.run_dir import write_json
from elmo_experiments.version import __version__, code_version

RUN_FILE = "run.json"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def file_digests(config: Any, group: str) -> list[dict[str, str]]:
    """The ``run.json`` entry of every file of ``group`` (e.g. the pretrained weights of an
    embedder, or an ``embedding``'s ``pretrained_file``) the config reads, with its SHA-1; the
    components declare them to the registry (``config/external.py``)."""
    found = (files.find(params) for files, params in external_configs(config, group))
    return [f.record for f in found if f is not None]


def vector_digests(config: Any) -> list[dict[str, str]]:
    """Every ``embedding``'s ``pretrained_file`` in a config and its SHA-1."""
    return file_digests(config, "vectors")


def identity(source: str | Path, overrides: list[str] | None, ext_vars: dict[str, str] | None,
             environment: dict[str, str] | None, config: dict[str, Any]) -> dict[str, Any]:
    source = Path(source)
    return {
        "config": {"path": str(source.resolve()),
                   "sha256": sha256_of(source) if source.is_file() else None},
        "overrides": list(overrides or []),
        "ext_vars": dict(ext_vars or {}),
        "environment_read": dict(sorted((environment or {}).items())),
        **{group: file_digests(config, group) for group in external_groups()},
    }


def read_record(run_dir: Path) -> dict[str, Any] | None:
    """The run's ``run.json``, or None before it exists; a damaged one is a ``DataError``."""
    path = run_dir / RUN_FILE
    if not path.is_file():
        return None
    record = read_json(path)
    if not isinstance(record.get("sessions"), list):
        raise DataError(f"{path}: has no list of sessions; the file is damaged (repair or "
                        f"delete it to resume)")
    return record


def record_start(run_dir: Path, what: dict[str, Any], processes: int = 1) -> None:
    """Start (or, when the run resumes, continue) ``run.json``; ``processes``: how many
    train this session (``torchrun``'s world size)."""
    path = run_dir / RUN_FILE
    record = read_record(run_dir) or {**what, "sessions": []}
    record["sessions"].append({
        "started": _now(), "ended": None, "code": code_version(), "host": socket.gethostname(),
        "versions": {"elmo_experiments": __version__, "torch": torch.__version__,
                     "python": platform.python_version()},
        "overrides": what["overrides"], "ext_vars": what["ext_vars"],
        "processes": processes})
    record["ended"] = None
    write_json(path, record)


def record_end(run_dir: Path) -> None:
    path = run_dir / RUN_FILE
    if not path.is_file():
        return
    record = read_record(run_dir)
    assert record is not None
    record["ended"] = record["sessions"][-1]["ended"] = _now()
    write_json(path, record)
