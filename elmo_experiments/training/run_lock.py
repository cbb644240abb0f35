"""One writer per run directory: an exclusive ``fcntl.flock`` on ``RUN_DIR/run.lock``.

Every command that writes a run directory (train, pretrain, a sweep's cell, archive) holds the
lock while it writes; a second writer gets a one-line ``RunDirLocked`` naming the holder's PID
and host. The kernel drops the lock when its process ends, however it ends, so a lock file
left by a killed process is stale and simply taken over. The holder removes the file when it
lets go. Holding is re-entrant within a process (a sweep's cell, then its training).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import write_error
from elmo_experiments.errors import RunDirLocked
from elmo_experiments.training.distributed import SINGLE, World

LOCK_FILE = "run.lock"

_held: dict[Path, list[int]] = {}  # resolved run directory -> [file descriptor, depth]


def _holder(path: Path) -> str:
    """Who the lock file says holds it: "process PID on HOST (since TIME)"."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return f"process {record['pid']} on {record['host']} (since {record['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it has not written its PID yet)"


def _lock(path: Path) -> int:
    """An open, exclusively locked descriptor of ``path`` (created if missing); raises
    ``RunDirLocked`` when another process holds it."""
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            raise RunDirLocked(
                f"{path.parent}: in use by {_holder(path)}; wait for it to end or stop it "
                f"first (two writers would mix their runs)") from None
        try:
            same = os.stat(path).st_ino == os.fstat(handle).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file its last holder removed while we opened it
            return handle
        os.close(handle)


def acquire(run_dir: str | Path) -> None:
    """Lock ``run_dir`` (creating it) for this process, or raise ``RunDirLocked``."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    key = run_dir.resolve()
    if key in _held:
        _held[key][1] += 1
        return
    path = run_dir / LOCK_FILE
    handle = _lock(path)
    record: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname(),
                              "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                              "command": sys.argv}
    try:
        os.ftruncate(handle, 0)
        os.write(handle, (json.dumps(record) + "\n").encode())
    except OSError as error:  # a full disk: no lock left behind, and the file named
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(handle)
        raise write_error(path, error) from None
    _held[key] = [handle, 1]


def release(run_dir: str | Path, created: bool = False) -> None:
    """Let go of ``run_dir`` (the outermost holder removes the lock file, and the directory
    when ``created`` and nothing else is in it)."""
    run_dir = Path(run_dir)
    key = run_dir.resolve()
    entry = _held.get(key)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1]:
        return
    del _held[key]
    with contextlib.suppress(FileNotFoundError):
        (run_dir / LOCK_FILE).unlink()  # while still locked: no one can take a removed file
    os.close(entry[0])
    if created:
        with contextlib.suppress(OSError):  # not empty: the run wrote something
            run_dir.rmdir()


def holds(run_dir: str | Path) -> bool:
    """Whether this process holds ``run_dir``'s lock."""
    return Path(run_dir).resolve() in _held


@contextlib.contextmanager
def run_dir_lock(run_dir: str | Path, world: World = SINGLE) -> Iterator[None]:
    """Hold ``run_dir``'s lock for the block; a directory the lock had to create is removed
    again if nothing was written into it. In a multi-process run rank 0 (the one that writes)
    holds it, and every rank raises the same ``RunDirLocked`` when it cannot."""
    created = world.main and not Path(run_dir).exists()
    refused = None
    if world.main:
        try:
            acquire(run_dir)
        except RunDirLocked as error:
            refused = str(error)
    refused = world.broadcast(refused)
    if refused is not None:
        raise RunDirLocked(refused)
    try:
        yield
    finally:
        if world.main:
            release(run_dir, created)
