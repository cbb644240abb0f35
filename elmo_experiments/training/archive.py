"""``model.tar.gz``: a trained model to hand to a colleague, usable from any directory.

It holds the run's ``config.json`` (its paths made absolute when the run started), the
vocabulary, the best weights, ``metrics.json``, and the external files the components declare
(pretrained weights): the files themselves when the config names a directory or files, or, for
a shipped or released name, that name and the digest it must still have. ``archive.json`` lists
which, and every file's SHA-256.

An archive is extracted once into the cache: into a temporary folder, checked (the whole gzip
stream read, so its CRC is checked; every file the model needs present, with its listed
SHA-256), and only then renamed into place, marked complete; a damaged archive is a one-line
error naming it and leaves nothing in the cache.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import shutil
import tarfile
import zlib
from pathlib import Path
from typing import Any

from elmo_experiments.config.external import ExternalFiles, Found
from elmo_experiments.config.walk import (
    declared_external_files,
    external_configs,
    external_groups,
)
from elmo_experiments.data.files import (
    atomic_write,
    atomic_write_text,
    cache_root,
    create_staging_folder,
    read_json,
    replace_folder,
    sha256_of,
)
from elmo_experiments.errors import DataError, RunDirError
from elmo_experiments.training.run_dir import ARCHIVE_FILE
from elmo_experiments.training.run_identity import read_record

MANIFEST_FILE = "archive.json"
FORMAT = 1
EXTRACTED = ".extracted"  # written last into an extraction once it is whole and checked


def packed_groups() -> dict[str, tuple[str, ...]]:
    """Group -> the names of its archived copies, for every group of external files the
    archive packs, as the components declare them (``config/external.py``)."""
    return {files.group: files.copies for _, files in sorted(declared_external_files().items())
            if files.packed is not None}


def _recorded(run_dir: Path, group: str,
              declared: list[tuple[ExternalFiles, dict[str, Any]]]) -> list[Found] | None:
    """The files and digests ``run.json`` recorded for ``group``, if it has all of them."""
    entries = (read_record(run_dir) or {}).get(group) or []
    if len(entries) != len(declared):
        return None
    found = [files.recorded(entry) if files.recorded and isinstance(entry, dict) else None
             for (files, _), entry in zip(declared, entries, strict=True)]
    return None if None in found else found  # type: ignore[return-value]


def _pack(run_dir: Path, config: Any, group: str,
          files: dict[str, Path]) -> list[dict[str, Any]]:
    """The manifest entries of ``group``'s external files; the files to pack go into ``files``."""
    declared = external_configs(config, group)
    recorded = _recorded(run_dir, group, declared)
    listed = []
    for index, (external, params) in enumerate(declared):
        # resolved and digested when the run started: no second read
        found = recorded[index] if recorded else external.find(params)
        if found is None:
            raise DataError(f"{external.label} #{index}: names no file to pack")
        entry: dict[str, Any] = {"sha1": found.digest}
        name = external.name(params) if external.name else None
        if name is not None:
            entry["name"] = name
        else:
            entry["embedded"] = f"{group}/{index}"
            files |= {f"{group}/{index}/{copy}": path for copy, path in found.files.items()}
        listed.append(entry)
    return listed


def write_archive(run_dir: str | Path, weights: str = "best.pt",
                  output: str | Path | None = None) -> Path:
    """Pack the run into ``output`` (default ``RUN_DIR/model.tar.gz``), atomically; writing
    into the run directory takes its lock (``run_lock``)."""
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
    packed = {group: _pack(run_dir, config, group, files) for group in packed_groups()}
    manifest = {"format": FORMAT, **packed,
                "files": {name: sha256_of(path) for name, path in files.items()}}
    target = Path(output) if output else run_dir / ARCHIVE_FILE

    def write(tmp: str) -> None:
        # weights barely compress: level 1 is 5% larger than 9 and ten times faster (a run
        # with pretrained weights of 100 MB: 2 s instead of 21)
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
    """The folder holding ``path``'s contents: extracted once into the cache (by digest),
    through a temporary folder, and renamed into place only when whole and checked."""
    path = Path(path)
    folder = cache_root() / "archives" / sha256_of(path)[:20]
    if (folder / EXTRACTED).is_file():
        return folder
    staging = create_staging_folder(folder)
    try:
        _extract(path, staging)
        problem = _incomplete(staging)
        if problem:
            raise DataError(f"{path}: {problem}; the archive is damaged or incomplete")
        atomic_write_text(staging / EXTRACTED, f"{path}\n")
        if not (folder / EXTRACTED).is_file():  # else another process extracted it first
            replace_folder(staging, folder)  # (and over an unfinished earlier extraction)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
        raise DataError(f"{path}: cannot read the archive ({error}); it is damaged") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _extract(path: Path, staging: Path) -> None:
    """Every member of ``path`` into ``staging`` (its files are staged, so written directly),
    then the rest of the gzip stream read: gzip checks its CRC only at the end, and tarfile
    stops without a word at a damaged header."""
    with gzip.open(path, "rb") as stream, tarfile.open(fileobj=stream, mode="r:") as tar:
        members = tar.getmembers()
        for member in members:
            if not (member.isfile() or member.isdir()) or member.name.startswith("/") \
                    or ".." in Path(member.name).parts:
                raise DataError(f"{path}: {member.name!r} is not a plain file inside the "
                                f"archive; refusing to extract it")
        tar.extractall(staging, members=members,
                       **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        while stream.read(1 << 20):
            pass


def _incomplete(folder: Path) -> str | None:
    """What an extracted archive lacks: its manifest, a file the model needs, or a file whose
    SHA-256 differs from the one the manifest lists (archives since the listing was added)."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"not a model archive (no {MANIFEST_FILE})"
    except (ValueError, UnicodeDecodeError) as error:
        return f"{MANIFEST_FILE} is not JSON ({error})"
    listed: dict[str, str] = manifest.get("files") or {}
    needed = ["config.json", "best.pt", "vocabulary/namespaces.json", *listed]
    for group, copies in packed_groups().items():
        for entry in manifest.get(group, []):
            if "embedded" in entry:
                needed += [f"{entry['embedded']}/{copy}" for copy in copies]
    try:
        namespaces = json.loads((folder / "vocabulary/namespaces.json").read_text("utf-8"))
        needed += [f"vocabulary/{n}.txt" for n in namespaces]
    except (OSError, ValueError, TypeError):
        pass  # named as missing or checked against its digest below
    for name in dict.fromkeys(needed):
        if not (folder / name).is_file():
            return f"{name} is missing"
        if name in listed and sha256_of(folder / name) != listed[name]:
            return f"{name} differs from its SHA-256 in {MANIFEST_FILE}"
    return None


def loading_config(config: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The config to rebuild the model from in ``folder`` (a run directory or an extracted
    archive): the archive's copies of external files (pretrained weights) replace the original
    paths (a named one must still have its digest), and files not packed (word vectors) are not read
    again (the weights hold them)."""
    config = copy.deepcopy(config)
    manifest = read_json(folder / MANIFEST_FILE) if (folder / MANIFEST_FILE).is_file() else None
    if manifest is not None:
        for group in packed_groups():
            _unpack(folder, manifest.get(group, []), external_configs(config, group))
    for group in external_groups():
        for external, params in external_configs(config, group):
            if external.packed is None and external.unpacked is not None:
                external.unpacked(params)
    return config


def _unpack(folder: Path, listed: list[dict[str, Any]],
            declared: list[tuple[ExternalFiles, dict[str, Any]]]) -> None:
    """Point each declared config at its archived copy, or check the digest of its name."""
    if len(listed) != len(declared):
        label = declared[0][0].label if declared else "external file"
        raise DataError(f"{folder / MANIFEST_FILE}: lists {len(listed)} {label}s, the config "
                        f"has {len(declared)}; the archive is damaged")
    for (external, params), entry in zip(declared, listed, strict=True):
        if "embedded" in entry:
            assert external.packed is not None
            external.packed(params, folder / entry["embedded"])
            continue
        assert external.digest_of is not None
        digest = external.digest_of(entry["name"])
        if digest != entry["sha1"]:
            raise DataError(f"{folder}: the model was trained with {external.label} "
                            f"{entry['name']!r} of SHA-1 {entry['sha1']}, but "
                            f"{entry['name']!r} here has {digest}")
