"""``model.tar.gz``: a trained model to hand to a colleague, usable from any directory.

It holds the run's ``config.json`` (its paths made absolute when the run started), the
vocabulary, the best weights, ``metrics.json``, and the biLM: the files themselves when the
config names a directory or files, or, for a shipped or released name, that name and the
digest it must still have. ``archive.json`` lists which.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import atomic_write, read_json, sha256_of
from elmo_experiments.errors import DataError, RunDirError

ARCHIVE_FILE = "model.tar.gz"
MANIFEST_FILE = "archive.json"
FORMAT = 1


def configs_of_type(config: Any, kind: str) -> list[dict[str, Any]]:
    """Every component config of ``type: kind`` in ``config``, in document order."""
    if isinstance(config, dict):
        found = [config] if config.get("type") == kind else []
        return found + [c for value in config.values() for c in configs_of_type(value, kind)]
    if isinstance(config, list):
        return [c for value in config for c in configs_of_type(value, kind)]
    return []


def elmo_configs(config: Any) -> list[dict[str, Any]]:
    """Every ``elmo`` embedder config in ``config``, in document order."""
    return configs_of_type(config, "elmo")


def _named(elmo: dict[str, Any]) -> str | None:
    """The shipped or released name the embedder uses, or None for a directory or files."""
    from elmo_experiments.bilm.pretrained import KNOWN, shipped

    name = elmo.get("weights")
    if name is None or Path(name).expanduser().is_dir():
        return None
    return name if name in KNOWN or name in shipped() else None


def _recorded_bilms(run_dir: Path, count: int) -> list[dict[str, str]] | None:
    """The biLM files and digests ``run.json`` recorded, if it has all ``count`` of them."""
    from elmo_experiments.training.run_identity import read_record

    entries = (read_record(run_dir) or {}).get("bilm") or []
    complete = len(entries) == count and all(
        {"options", "weight_file", "sha1"} <= set(e) and Path(e["options"]).is_file()
        and Path(e["weight_file"]).is_file() for e in entries)
    return entries if complete else None


def write_archive(run_dir: str | Path, weights: str = "best.pt",
                  output: str | Path | None = None) -> Path:
    """Pack the run into ``output`` (default ``RUN_DIR/model.tar.gz``), atomically; writing
    into the run directory takes its lock (``run_lock``)."""
    from elmo_experiments.bilm.pretrained import resolve_bilm
    from elmo_experiments.bilm.weights import weights_digest
    from elmo_experiments.training.run_dir import read_config
    from elmo_experiments.training.run_lock import run_dir_lock

    run_dir = Path(run_dir)
    for needed in ("config.json", "vocabulary", weights):
        if not (run_dir / needed).exists():
            raise RunDirError(f"{run_dir}: has no {needed}; train (or resume) the run first")
    config = read_config(run_dir)
    files = {"config.json": run_dir / "config.json", "best.pt": run_dir / weights}
    files |= {f"vocabulary/{p.name}": p for p in sorted((run_dir / "vocabulary").iterdir())
              if p.is_file()}
    if (run_dir / "metrics.json").is_file():
        files["metrics.json"] = run_dir / "metrics.json"
    elmos = elmo_configs(config)
    recorded = _recorded_bilms(run_dir, len(elmos))
    bilms = []
    for index, elmo in enumerate(elmos):
        if recorded:  # resolved and digested when the run started: no second read
            options, weight_file = Path(recorded[index]["options"]), \
                Path(recorded[index]["weight_file"])
            sha1 = recorded[index]["sha1"]
        else:
            options, weight_file = resolve_bilm(elmo.get("weights"), elmo.get("options_file"),
                                                elmo.get("weight_file"))
            sha1 = weights_digest(options, weight_file)
        entry: dict[str, Any] = {"sha1": sha1}
        name = _named(elmo)
        if name is not None:
            entry["name"] = name
        else:
            entry["embedded"] = f"bilm/{index}"
            files[f"bilm/{index}/options.json"] = options
            files[f"bilm/{index}/weights.hdf5"] = weight_file
        bilms.append(entry)
    manifest = {"format": FORMAT, "bilm": bilms}
    target = Path(output) if output else run_dir / ARCHIVE_FILE

    def write(tmp: str) -> None:
        # weights barely compress: level 1 is 5% larger than 9 and ten times faster (a run
        # with the shipped biLM: 2 s instead of 21)
        with tarfile.open(tmp, "w:gz", compresslevel=1) as tar:
            data = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo(MANIFEST_FILE)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            for name, path in files.items():
                tar.add(path, arcname=name)

    inside = target.resolve().parent == run_dir.resolve()
    with run_dir_lock(run_dir) if inside else contextlib.nullcontext():
        atomic_write(target, write)
    return target


def extract_archive(path: str | Path) -> Path:
    """The folder holding ``path``'s contents: extracted once into the cache (by digest)."""
    from elmo_experiments.bilm.pretrained import cache_root

    path = Path(path)
    folder = cache_root() / "archives" / sha256_of(path)[:20]
    if (folder / MANIFEST_FILE).is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".extract.", dir=folder.parent))
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar.getmembers():
                if not (member.isfile() or member.isdir()) or member.name.startswith("/") \
                        or ".." in Path(member.name).parts:
                    raise DataError(f"{path}: {member.name!r} is not a plain file inside the "
                                    f"archive; refusing to extract it")
            tar.extractall(staging, **({"filter": "data"} if hasattr(tarfile, "data_filter")
                                       else {}))
        if not (staging / MANIFEST_FILE).is_file():
            raise DataError(f"{path}: not a model archive (no {MANIFEST_FILE})")
        try:
            os.replace(staging, folder)
        except OSError:  # another process extracted it first
            if not (folder / MANIFEST_FILE).is_file():
                raise
    except (tarfile.TarError, EOFError, OSError) as error:
        raise DataError(f"{path}: cannot read the archive ({error})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def loading_config(config: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The config to rebuild the model from in ``folder`` (a run directory or an extracted
    archive): the archive's biLM files replace the original paths (a named biLM must still
    have its digest), and word vectors are not read again (the weights hold them)."""
    from elmo_experiments.bilm.pretrained import resolve_bilm
    from elmo_experiments.bilm.weights import weights_digest

    config = copy.deepcopy(config)
    manifest = read_json(folder / MANIFEST_FILE) if (folder / MANIFEST_FILE).is_file() else None
    elmos = elmo_configs(config)
    if manifest is not None:
        if len(manifest.get("bilm", [])) != len(elmos):
            raise DataError(f"{folder / MANIFEST_FILE}: lists {len(manifest.get('bilm', []))} "
                            f"biLMs, the config has {len(elmos)}; the archive is damaged")
        for elmo, entry in zip(elmos, manifest["bilm"], strict=True):
            if "embedded" in entry:
                elmo.update(weights=str(folder / entry["embedded"]), options_file=None,
                            weight_file=None)
                continue
            digest = weights_digest(*resolve_bilm(entry["name"]))
            if digest != entry["sha1"]:
                raise DataError(f"{folder}: the model was trained with biLM {entry['name']!r} "
                                f"of SHA-1 {entry['sha1']}, but {entry['name']!r} here has "
                                f"{digest}")
    _drop_vectors(config)
    return config


def _drop_vectors(config: Any) -> None:
    if isinstance(config, dict):
        if config.get("pretrained_file") is not None:
            config["pretrained_file"] = None
        for value in config.values():
            _drop_vectors(value)
    elif isinstance(config, list):
        for value in config:
            _drop_vectors(value)
