"""The run directory: creation rules (``--force`` / ``--recover``) and atomic file writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.data.files import atomic_write
from elmo_experiments.errors import RunDirError


def check_run_dir(path: str | Path, force: bool = False, recover: bool = False) -> None:
    """Refuse what ``prepare_run_dir`` would refuse, without changing anything."""
    path = Path(path)
    if force and recover:
        raise RunDirError("--force and --recover exclude each other")
    if recover:
        if not (path / "config.json").is_file():
            raise RunDirError(f"{path}: nothing to recover (no config.json)")
    elif path.is_dir() and any(path.iterdir()) and not force:
        raise RunDirError(
            f"{path}: run directory exists and is not empty; "
            "use --recover to resume it or --force to overwrite it"
        )


def prepare_run_dir(path: str | Path, force: bool = False, recover: bool = False) -> Path:
    """Create ``path``; a non-empty one needs ``force`` (wipe it) or ``recover`` (resume it)."""
    path = Path(path)
    check_run_dir(path, force, recover)
    if recover:
        return path
    if path.is_dir() and any(path.iterdir()):
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_json(path: str | Path, data: Any) -> None:
    """Write JSON atomically (temporary file + rename)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")

    atomic_write(Path(path), write)


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """``torch.save`` atomically, so an interrupted write never corrupts the last checkpoint."""
    atomic_write(Path(path), lambda tmp: torch.save(state, tmp))


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise RunDirError(f"{path}: no such checkpoint")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # not a checkpoint: pickle, zip or torch errors
        raise RunDirError(f"{path}: not a readable checkpoint ({type(error).__name__})") from None
    if not isinstance(checkpoint, dict) or "model" not in checkpoint:
        raise RunDirError(f"{path}: not a model checkpoint (no 'model' entry)")
    return checkpoint


# Keys a recovered run may change: how long it trains, not what it trains.
EXTENSIBLE = ("trainer.num_epochs", "trainer.patience", "trainer.progress_bar")


def config_differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Dotted paths where two configs differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        diffs = []
        for key in sorted(set(old) | set(new)):
            where = f"{path}.{key}" if path else key
            diffs += config_differences(old.get(key), new.get(key), where)
        return diffs
    return [] if old == new else [path or "<top>"]


def start_or_recover(run_dir: Path, config: dict[str, Any], recover: bool, source: str) -> None:
    """Write ``config.json``, or on recovery check the config matches the saved one.

    A recovered run may extend its schedule (``EXTENSIBLE`` keys); the saved config is
    updated then. Any other difference is an error.
    """
    target = run_dir / "config.json"
    if recover:
        saved = json.loads(target.read_text())
        differences = config_differences(saved, config)
        fixed = [d for d in differences if d not in EXTENSIBLE]
        if fixed:
            raise RunDirError(f"{target} differs from {source} at {', '.join(fixed[:5])}; "
                              "cannot recover with another config")
        if not differences:
            return
    write_json(target, config)
