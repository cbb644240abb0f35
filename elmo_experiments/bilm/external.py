"""The files an ``elmo`` embedder reads, declared to the registry (``config/external.py``):
``run.json`` records them, ``model.tar.gz`` packs them, or names a shipped or released biLM
and the digest it must still have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elmo_experiments.bilm.pretrained import KNOWN, resolve_bilm, shipped
from elmo_experiments.bilm.weights import weights_digest
from elmo_experiments.config.external import ExternalFiles, Found

OPTIONS_COPY = "options.json"  # the names of the files' copies in an archive
WEIGHTS_COPY = "weights.hdf5"


def _found(options: Path, weight_file: Path, digest: str, record: dict[str, str]) -> Found:
    return Found({OPTIONS_COPY: options, WEIGHTS_COPY: weight_file}, digest, record)


def find(params: dict[str, Any]) -> Found:
    """The options and weight files the embedder reads and their SHA-1."""
    options, weight_file = resolve_bilm(params.get("weights"), params.get("options_file"),
                                        params.get("weight_file"))
    digest = weights_digest(options, weight_file)
    return _found(options, weight_file, digest, {
        "weights": str(params.get("weights") or options.parent),
        "options": str(options.resolve()), "weight_file": str(weight_file.resolve()),
        "sha1": digest})


def recorded(entry: dict[str, Any]) -> Found | None:
    """A ``run.json`` entry's files, if it lists both and they are still there."""
    if not {"options", "weight_file", "sha1"} <= set(entry):
        return None
    options, weight_file = Path(entry["options"]), Path(entry["weight_file"])
    if not (options.is_file() and weight_file.is_file()):
        return None
    return _found(options, weight_file, entry["sha1"], entry)


def name(params: dict[str, Any]) -> str | None:
    """The shipped or released name the embedder uses, or None for a directory or files."""
    weights = params.get("weights")
    if weights is None or Path(weights).expanduser().is_dir():
        return None
    return weights if weights in KNOWN or weights in shipped() else None


def digest_of(weights: str) -> str:
    """The SHA-1 of the biLM a name resolves to here."""
    return weights_digest(*resolve_bilm(weights))


def packed(params: dict[str, Any], folder: Path) -> None:
    """Point the embedder at the archived copies in ``folder``."""
    params.update(weights=str(folder), options_file=None, weight_file=None)


ELMO_FILES = ExternalFiles("bilm", find, label="biLM", copies=(OPTIONS_COPY, WEIGHTS_COPY),
                           recorded=recorded, name=name, digest_of=digest_of, packed=packed)
