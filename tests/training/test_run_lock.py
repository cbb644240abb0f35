"""One writer per run directory: train, pretrain, archive and a sweep's cell refuse a directory
another live process holds, with a one-line error naming its PID and host; a lock whose holder
died is taken over; the lock file is gone once the holder lets go."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from elmo_experiments.errors import RunDirLocked
from elmo_experiments.run import train
from elmo_experiments.training.run_lock import LOCK_FILE, acquire, holds, release

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "experiments" / "ner_baseline.jsonnet"
FAST = ["trainer.num_epochs=1", "trainer.progress_bar=false", "trainer.tensorboard=false",
        "data_loader.batch_size=16"]
HOLD = ("import sys, time\nfrom elmo_experiments.training.run_lock import acquire\n"
        "acquire(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(600)\n")


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A run directory with a finished run in it, locked by another live process."""
    run_dir = tmp_path / "run"
    train(CONFIG, run_dir, overrides=FAST)
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    yield run_dir, process
    process.kill()
    process.wait()


def _listing(run_dir: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in run_dir.iterdir()}


def _refused(error: pytest.ExceptionInfo[RunDirLocked], pid: int, run_dir: Path) -> None:
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{run_dir}: in use by process {pid} on {socket.gethostname()}")


@pytest.mark.parametrize("flags", [{"force": True}, {"recover": True}], ids=["force", "recover"])
def test_a_second_writer_is_refused_and_changes_nothing(holder, flags: dict[str, bool]) -> None:
    run_dir, process = holder
    before = _listing(run_dir)
    with pytest.raises(RunDirLocked) as error:
        train(CONFIG, run_dir, overrides=[*FAST, "trainer.num_epochs=2"], **flags)
    _refused(error, process.pid, run_dir)
    assert _listing(run_dir) == before


def test_archive_and_pretrain_are_refused_too(holder, tmp_path: Path) -> None:
    from elmo_experiments.bilm.pretraining.run import pretrain
    from elmo_experiments.training.archive import write_archive

    run_dir, process = holder
    before = _listing(run_dir)
    with pytest.raises(RunDirLocked) as error:
        write_archive(run_dir)
    _refused(error, process.pid, run_dir)
    assert _listing(run_dir) == before
    locked = tmp_path / "bilm"
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(locked)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        with pytest.raises(RunDirLocked) as error:
            pretrain(ROOT / "experiments" / "bilm" / "tiny.jsonnet", locked,
                     overrides=["trainer.num_epochs=1", "data_loader.batches_per_epoch=2"])
        _refused(error, other.pid, locked)
        assert sorted(p.name for p in locked.iterdir()) == [LOCK_FILE]  # no corpus staged
    finally:
        other.kill()
        other.wait()


def test_a_dead_holders_lock_is_taken_over(holder) -> None:
    run_dir, process = holder
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert (run_dir / LOCK_FILE).is_file()  # left behind by the killed process: stale
    metrics = train(CONFIG, run_dir, overrides=[*FAST, "trainer.num_epochs=2"], recover=True)
    assert metrics["epochs_completed"] == 2
    assert not (run_dir / LOCK_FILE).exists()  # removed when the run let go


def test_the_lock_is_reentrant_and_removes_only_what_it_created(tmp_path: Path) -> None:
    run_dir = tmp_path / "new"
    acquire(run_dir)
    acquire(run_dir)  # a sweep's cell, then its training, in one process
    release(run_dir)
    assert holds(run_dir) and (run_dir / LOCK_FILE).is_file()
    release(run_dir, created=True)
    assert not holds(run_dir) and not run_dir.exists()


@pytest.mark.slow  # torchrun starts three processes; make test-all (CI) runs it
def test_two_processes_of_a_torchrun_run_both_stop_on_a_held_directory(holder) -> None:
    """Rank 0 holds the lock for the run; the other ranks hear of a refusal from it (and
    do not wait for it at a barrier)."""
    run_dir, process = holder
    environment = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    environment["OMP_NUM_THREADS"] = "1"
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
         "-m", "elmo_experiments", "train", str(CONFIG), "-s", str(run_dir), "--recover",
         *[arg for o in FAST for arg in ("-o", o)]],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert result.stderr.count(f"in use by process {process.pid}") == 2, result.stderr[-2000:]
    assert time.monotonic() - start < 240


def test_a_lock_that_cannot_be_written_names_its_file_and_leaves_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments.errors import WriteError
    from elmo_experiments.training import run_lock

    def full(handle: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_lock.os, "write", full)
    with pytest.raises(WriteError, match=rf"^{tmp_path / 'run' / 'run.lock'}: cannot write it: "
                                         rf"the disk is full"):
        run_lock.acquire(tmp_path / "run")
    assert not (tmp_path / "run" / "run.lock").exists()
    assert not run_lock.holds(tmp_path / "run")
