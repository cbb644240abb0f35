"""The run directory: creation rules (``--force`` / ``--recover``), atomic file writes, and
checkpoints that describe and verify themselves.

``config.json`` marks a run as existing: it is written once the vocabulary is in place, so a
directory without it holds nothing durable, and a new start may clear it (when it holds only
files a run writes)."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import re
import shutil
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.config.paths import portable_paths, project_paths
from elmo_experiments.data.files import atomic_write, read_json, write_error
from elmo_experiments.errors import RunDirError
from elmo_experiments.training.run_lock import LOCK_FILE

logger = logging.getLogger("elmo_experiments")

FAILED_FILE = "FAILED.json"  # a sweep's record of a cell that failed
ARCHIVE_FILE = "model.tar.gz"  # archive.py writes it

# What a run writes into its directory (temporary names: a dot, the name, a dot, a suffix):
# its records and checkpoints, the callbacks' folders, the archive, a sweep's failure record
# and the writer's lock; an assembly adds its own (``also_written``).
RUN_ENTRIES = {"config.json", "run.json", "out.log", "log.jsonl", "vocabulary", "metrics.json",
               "best.pt", "last.pt", "tensorboard", "wandb", ARCHIVE_FILE, FAILED_FILE,
               LOCK_FILE}


def also_written(*names: str) -> None:
    """Entries an assembly writes into its run directories besides the trainer's (e.g. a
    pretraining run's prepared corpus and export)."""
    RUN_ENTRIES.update(names)
_TEMPORARY = re.compile(r"\.(?P<name>[^/]+?)\.[A-Za-z0-9_]{8}")
_EPOCH_METRICS = re.compile(r"metrics_epoch_\d+\.json")


def is_run_entry(name: str) -> bool:
    """Whether a directory entry is something a run writes (or a temporary of one)."""
    temporary = _TEMPORARY.fullmatch(name)
    if temporary:
        name = temporary["name"]
    return name in RUN_ENTRIES or bool(_EPOCH_METRICS.fullmatch(name))


def _entries(path: Path) -> list[str]:
    """The directory's entries, sorted, but for the lock file (which the writer holds)."""
    return sorted(entry.name for entry in path.iterdir() if entry.name != LOCK_FILE)


def nothing_durable(path: Path) -> bool:
    """A non-empty directory a run started in but that holds nothing to resume: no
    ``config.json``, and only entries a run writes. A new start may clear it."""
    entries = _entries(path)
    return bool(entries) and "config.json" not in entries and all(map(is_run_entry, entries))


def check_run_dir(path: str | Path, force: bool = False, recover: bool = False) -> None:
    """Refuse what ``prepare_run_dir`` would refuse, without changing anything: ``--force``
    deletes only what a run writes, so anything else in the directory is refused by name."""
    path = Path(path)
    if force and recover:
        raise RunDirError("--force and --recover exclude each other")
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{path}: a file, not a run directory")
    if path.is_dir() and nothing_durable(path):
        return  # a start killed before it wrote anything durable: it restarts
    if recover:
        if not (path / "config.json").is_file():
            raise RunDirError(f"{path}: nothing to recover (no config.json); start it without "
                              "--recover")
    elif path.is_dir() and _entries(path):
        if not force:
            raise RunDirError(
                f"{path}: run directory exists and is not empty; "
                "use --recover to resume it or --force to overwrite it"
            )
        foreign = [name for name in _entries(path) if not is_run_entry(name)]
        if foreign:
            raise RunDirError(
                f"{path}: holds {foreign[0]!r}, which no run writes; --force deletes only a "
                f"run's own files, so move it away or choose another run directory "
                f"({len(foreign)} such entr{'y' if len(foreign) == 1 else 'ies'}, nothing "
                f"deleted)")


def clear_run_dir(path: Path, keep: tuple[str, ...] = ()) -> None:
    """Delete what a run wrote into ``path``, but for the lock file and ``keep``."""
    for name in _entries(path):
        if name in keep:
            continue
        entry = path / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def prepare_run_dir(path: str | Path, force: bool = False, recover: bool = False,
                    keep: tuple[str, ...] = ()) -> bool:
    """Create ``path``; a non-empty one needs ``force`` (clear what a run wrote there) or
    ``recover`` (resume it). ``keep``: entries already staged for this start. Returns whether
    the run resumes (False when there was nothing durable to resume)."""
    path = Path(path)
    check_run_dir(path, force, recover)
    if path.is_dir() and nothing_durable(path) and set(_entries(path)) - set(keep):
        logger.warning("%s holds nothing durable yet (a start was interrupted before its "
                       "config.json was written): starting afresh", path)
        clear_run_dir(path, keep)
        recover = False
    if recover and (path / "config.json").is_file():
        remove_temporaries(path)
        return True
    if path.is_dir():
        clear_run_dir(path, keep)
    path.mkdir(parents=True, exist_ok=True)
    return False


def remove_temporaries(path: Path) -> None:
    """Delete what interrupted atomic writes left behind (``.NAME.XXXXXXXX``, any depth)."""
    for entry in sorted(path.rglob(".*"), reverse=True):  # deepest first
        if _TEMPORARY.fullmatch(entry.name):
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def strict(data: Any) -> Any:
    """``data`` with every non-finite float (NaN, ±inf) replaced by None: strict JSON."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {key: strict(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [strict(value) for value in data]
    return data


def write_json(path: str | Path, data: Any) -> None:
    """Write JSON atomically (temporary file + rename)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(strict(data), handle, indent=2, sort_keys=True, allow_nan=False)
            handle.write("\n")

    atomic_write(Path(path), write)


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """``torch.save`` atomically, so an interrupted write never corrupts the last checkpoint;
    a full disk is a ``WriteError`` naming the file (torch reports it as a RuntimeError)."""
    path = Path(path)

    def write(tmp: str) -> None:
        try:
            torch.save(state, tmp)
        except RuntimeError as error:
            raise write_error(path, error) from None

    atomic_write(path, write)


def load_checkpoint(path: str | Path, mmap: bool = False) -> dict[str, Any]:
    """A checkpoint's contents; ``mmap`` maps the tensors instead of reading them (a cheap
    check that the file is whole and readable)."""
    path = Path(path)
    if not path.is_file():
        raise RunDirError(f"{path}: no such checkpoint")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except Exception as error:  # not a checkpoint: pickle, zip or torch errors
        raise RunDirError(f"{path}: not a readable checkpoint ({type(error).__name__})") from None
    if not isinstance(checkpoint, dict) or "model" not in checkpoint:
        raise RunDirError(f"{path}: not a model checkpoint (no 'model' entry)")
    return checkpoint


def _fixed(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` without the keys a recovery may extend (``EXTENSIBLE``)."""
    fixed = copy.deepcopy(config)
    for dotted in EXTENSIBLE:
        section, _, key = dotted.partition(".")
        if isinstance(fixed.get(section), dict):
            fixed[section].pop(key, None)
    return fixed


def _sha256(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def config_digest(config: dict[str, Any]) -> str:
    """SHA-256 of a config without the keys a recovery may extend (``EXTENSIBLE``), its
    project paths written portably (the same digest from any checkout)."""
    return _sha256(_fixed(portable_paths(project_paths(config))))


def config_digests(config: dict[str, Any]) -> set[str]:
    """The digests a checkpoint of ``config`` may record: ``config_digest``, and that of its
    absolute paths (what checkpoints recorded before paths were stored portably)."""
    return {config_digest(config), _sha256(_fixed(project_paths(config)))}


def full_digest(config: dict[str, Any]) -> str:
    """SHA-256 of the whole config (its schedule included), project paths portable: two
    configs train the very same run exactly when their full digests are equal."""
    return _sha256(portable_paths(project_paths(config)))


def describe(config: dict[str, Any], vocabulary_sha1: str) -> dict[str, Any]:
    """What every checkpoint of a run records about what trained it."""
    return {"config": portable_paths(config), "config_sha256": config_digest(config),
            "vocabulary_sha1": vocabulary_sha1}


def shapes(model: torch.nn.Module) -> dict[str, list[int]]:
    return {name: list(tensor.shape) for name, tensor in model.state_dict().items()}


def verify_checkpoint(checkpoint: dict[str, Any], path: Path, kind: str,
                      model: torch.nn.Module, expected: dict[str, Any]) -> None:
    """A one-line ``RunDirError`` naming ``path`` unless the checkpoint is a ``kind`` one
    ("last": resumable, "best": weights) of this model, config and vocabulary.
    ``expected`` is ``describe(...)`` of the run directory it is loaded into."""
    found = checkpoint.get("kind") or ("last" if "optimizer" in checkpoint else "best")
    if kind == "last" and found != "last":
        raise RunDirError(f"{path}: a {found} checkpoint, not a resumable one (it has no "
                          f"optimizer state)")
    for key, what in (("config_sha256", "config"), ("vocabulary_sha1", "vocabulary")):
        allowed = ({expected[key]} | config_digests(expected["config"])
                   if key == "config_sha256" and "config" in expected
                   else {expected.get(key)})
        if key in checkpoint and key in expected and checkpoint[key] not in allowed:
            raise RunDirError(f"{path}: trained with another {what} than the run directory's "
                              f"(its {what} changed since, or the file comes from another run)")
    want = shapes(model)
    have = {name: list(tensor.shape) for name, tensor in checkpoint["model"].items()}
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    if missing or extra:
        raise RunDirError(f"{path}: weights of another model (missing "
                          f"{', '.join(missing[:3]) or 'none'}; unexpected "
                          f"{', '.join(extra[:3]) or 'none'})")
    for name, shape in want.items():
        if have[name] != shape:
            raise RunDirError(f"{path}: {name} has shape {have[name]} but the model's is "
                              f"{shape} (another model, or a vocabulary that changed)")


# Keys a recovered run may change: how long and where it trains, not what it trains.
EXTENSIBLE = ("trainer.num_epochs", "trainer.patience", "trainer.progress_bar",
              "trainer.tensorboard", "trainer.device", "trainer.cuda_device")


def config_differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Dotted paths where two configs differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        diffs = []
        for key in sorted(set(old) | set(new)):
            where = f"{path}.{key}" if path else key
            diffs += config_differences(old.get(key), new.get(key), where)
        return diffs
    return [] if old == new else [path or "<top>"]


def read_config(run_dir: str | Path) -> dict[str, Any]:
    """A run's ``config.json`` with its project paths made absolute for this checkout."""
    return project_paths(read_json(Path(run_dir) / "config.json"))


def stored_config(run_dir: Path, or_else: str = "") -> tuple[dict[str, Any], str]:
    """A finished (or stopped) run's config and its file's name, to rebuild its model from;
    a one-line ``RunDirError`` when ``run_dir`` holds none (``or_else``: what else it might
    have been, e.g. " nor a model archive")."""
    config_file = run_dir / "config.json"
    if not config_file.is_file():
        raise RunDirError(f"{run_dir}: not a run directory (no config.json){or_else}")
    return read_config(run_dir), str(config_file)


def load_trained(model: torch.nn.Module, run_dir: Path, weights: str, config: dict[str, Any],
                 vocabulary_sha1: str) -> None:
    """The weights of checkpoint ``weights`` of ``run_dir`` into ``model``, once they are
    checked to be this model's, trained with this config and vocabulary."""
    path = run_dir / weights
    checkpoint = load_checkpoint(path)
    verify_checkpoint(checkpoint, path, "best", model, describe(config, vocabulary_sha1))
    model.load_state_dict(checkpoint["model"])


def start_or_recover(run_dir: Path, config: dict[str, Any], recover: bool, source: str) -> None:
    """Write ``config.json`` (its project paths portable), or on recovery check the config
    matches the saved one.

    A recovered run may extend its schedule (``EXTENSIBLE`` keys); the saved config is
    updated then. Any other difference is an error.
    """
    target = run_dir / "config.json"
    if recover:
        saved = read_config(run_dir)
        differences = config_differences(saved, project_paths(config))
        fixed = [d for d in differences if d not in EXTENSIBLE]
        if fixed:
            raise RunDirError(f"{target} differs from {source} at {', '.join(fixed[:5])}; "
                              "cannot recover with another config")
        if not differences:
            return
    write_json(target, portable_paths(config))
