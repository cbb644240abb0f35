"""Callbacks get the step events, and their state lives in ``last.pt``: a run stopped mid-epoch
(SIGTERM at a fault point, ``elmo_experiments/faults.py``) and resumed with ``--recover``
gives its callbacks the very state an uninterrupted run's have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments.contracts import Callback
from elmo_experiments.errors import TrainingStopped
from elmo_experiments.run import train

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "experiments" / "ner_baseline.jsonnet"
FAST = ["trainer.num_epochs=3", "trainer.patience=null", "trainer.progress_bar=false",
        "trainer.tensorboard=false", "data_loader.batch_size=8",
        "trainer.accumulation_steps=2"]
EVENTS = ("batch", "epoch", "before_backward", "after_backward", "before_step", "after_step")


class Counting(Callback):
    """Counts every event, and sums the losses it was shown before backward."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(EVENTS, 0)
        self.loss_sum = 0.0
        self.order: list[str] = []  # this session's events, in order (not state)

    def _saw(self, event: str) -> None:
        self.counts[event] += 1
        self.order.append(event)

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        self._saw("batch")

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        self._saw("epoch")

    def on_before_backward(self, epoch: int, batch: int, loss: torch.Tensor) -> None:
        self._saw("before_backward")
        self.loss_sum += loss.item()

    def on_after_backward(self, epoch: int, batch: int) -> None:
        self._saw("after_backward")

    def on_before_optimizer_step(self, epoch: int, batch: int,
                                 optimizer: torch.optim.Optimizer) -> None:
        self._saw("before_step")

    def on_after_optimizer_step(self, epoch: int, batch: int,
                                optimizer: torch.optim.Optimizer) -> None:
        self._saw("after_step")

    def state_dict(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "loss_sum": self.loss_sum}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.counts = dict(state["counts"])
        self.loss_sum = state["loss_sum"]


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory, samples_only: None) -> Counting:
    counter = Counting()
    train(CONFIG, tmp_path_factory.mktemp("straight") / "run", overrides=FAST,
          callbacks=[counter])
    return counter


def test_step_events_come_in_order(uninterrupted: Counting) -> None:
    counts = uninterrupted.counts
    assert counts["epoch"] == 3
    assert counts["before_backward"] == counts["after_backward"] > counts["batch"]
    assert counts["before_step"] == counts["after_step"] == counts["batch"]  # one per step
    first_step = uninterrupted.order[:uninterrupted.order.index("batch") + 1]
    assert first_step == ["before_backward", "after_backward"] * 2 + [
        "before_step", "after_step", "batch"]  # two batches accumulate into one step


# with accumulation_steps=2 a step (and a fault point) ends at every other batch
@pytest.mark.parametrize("point", ["trainer:epoch:2:batch:4", "trainer:epoch:1:batch:2"])
def test_a_resumed_callback_continues_exactly(uninterrupted: Counting, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              point: str) -> None:
    run_dir = tmp_path / "run"
    monkeypatch.setenv("ELMO_FAULT_AT", point)
    monkeypatch.setenv("ELMO_FAULT_SIGNAL", "SIGTERM")  # stops with a mid-epoch last.pt
    first = Counting()
    with pytest.raises(TrainingStopped, match="--recover"):
        train(CONFIG, run_dir, overrides=FAST, callbacks=[first])
    assert first.counts["batch"] < uninterrupted.counts["batch"]
    monkeypatch.delenv("ELMO_FAULT_AT")
    resumed = Counting()
    train(CONFIG, run_dir, overrides=FAST, recover=True, callbacks=[resumed])
    assert resumed.counts == uninterrupted.counts
    assert resumed.loss_sum == uninterrupted.loss_sum  # the same losses, bit for bit


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_under_the_event_log_names_the_file(tmp_path: Path) -> None:
    """Appending to log.jsonl on a full disk: Python's error names no file; ours does."""
    from elmo_experiments.errors import WriteError
    from elmo_experiments.training.callbacks import JsonlLog

    (tmp_path / "log.jsonl").symlink_to("/dev/full")  # every write: ENOSPC
    log = JsonlLog()
    with pytest.raises(WriteError) as info:
        log.on_start(tmp_path, {})
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'log.jsonl'}: cannot write it: the disk is full (")
    assert "\n" not in message


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_under_out_log_is_one_warning_not_a_traceback_a_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from elmo_experiments.training.session import RunLog

    (tmp_path / "out.log").symlink_to("/dev/full")
    handler = RunLog(tmp_path / "out.log", encoding="utf-8")
    log = logging.getLogger("test_full_out_log")
    log.addHandler(handler)
    try:
        for i in range(3):
            log.warning("message %d", i)
    finally:
        log.removeHandler(handler)
        handler.close()
    assert capsys.readouterr().err == (f"warning: {tmp_path / 'out.log'}: cannot write it "
                                       f"([Errno 28] No space left on device); messages go to "
                                       f"the console meanwhile\n")


class FullDiskWriter:
    """A TensorBoard writer whose every write fails as on a full disk."""

    closed = False

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        raise OSError(28, "No space left on device")

    def flush(self) -> None: ...

    def close(self) -> None:
        self.closed = True


def test_tensorboard_on_a_full_disk_warns_once_naming_its_folder_and_training_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from elmo_experiments.training.callbacks import TensorBoardLog

    log = TensorBoardLog(every=1)
    log.directory = tmp_path / "tensorboard"
    log.writer = writer = FullDiskWriter()
    log.on_batch(0, 1, {"loss": 1.0})
    log.on_batch(0, 2, {"loss": 1.0})
    log.on_epoch(1, {"validation_f1": 1.0})
    log.on_end({})
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [f"{tmp_path / 'tensorboard'}: cannot write TensorBoard events (No space "
                        f"left on device): no more are written in this session"]
    assert writer.closed and log.writer is None


def test_a_background_writer_that_fails_on_a_full_disk_is_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    from elmo_experiments.training.session import _thread_error

    def write() -> None:
        raise OSError(28, "No space left on device")

    previous, threading.excepthook = threading.excepthook, _thread_error
    try:
        thread = threading.Thread(target=write, name="events")
        thread.start()
        thread.join()
    finally:
        threading.excepthook = previous
    assert capsys.readouterr().err == ("warning: background writer events stopped: [Errno 28] "
                                       "No space left on device\n")
