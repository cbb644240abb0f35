"""Seeing a run: TensorBoard events (steps, mix weights, recovery, off switch), the readable
ELMo mix line in out.log, and progress display that stays plain when stderr is no terminal."""

from __future__ import annotations

import io
import json
import logging
import re
import sys
from pathlib import Path

import pytest

from elmo_experiments import progress as progress_module
from elmo_experiments.contracts import Callback
from elmo_experiments.modules.embedders.mixes import config_at_input, mix_weights, placement_names
from elmo_experiments.progress import progress
from elmo_experiments.run import train
from elmo_experiments.training.callbacks import TensorBoardLog

ROOT = Path(__file__).resolve().parents[2]
ELMO_CONFIG = ROOT / "experiments" / "ner.jsonnet"
BASELINE = ROOT / "experiments" / "ner_baseline.jsonnet"
FAST = ["trainer.num_epochs=2", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=4"]
ELMO = "embedder.embedders.elmo"
EVERY = TensorBoardLog().every


def scalars(path: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar tag of an event folder (or one event file): its (step, value) points."""
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    events = accumulator.EventAccumulator(str(path), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)]
            for tag in events.Tags()["scalars"]}


def steps(points: list[tuple[int, float]]) -> list[int]:
    return [step for step, _ in points]


def batches_per_epoch(run_dir: Path) -> int:
    return int(re.search(r"(\d+) batches an epoch", (run_dir / "out.log").read_text())[1])


def batch_steps(epochs: int, per_epoch: int) -> list[int]:
    return [s for s in range(1, epochs * per_epoch + 1) if s % EVERY == 0]


class StopAt(Callback):
    """Raises KeyboardInterrupt at batch ``batch`` of epoch ``epoch`` (0-based): a crash
    after the epoch before it was saved."""

    def __init__(self, epoch: int, batch: int) -> None:
        self.epoch, self.batch = epoch, batch

    def on_batch(self, epoch, batch, logs):
        if (epoch, batch) == (self.epoch, self.batch):
            raise KeyboardInterrupt


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


@pytest.fixture(scope="module")
def elmo_run(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NER with ELMo (a tiny random biLM) at the input, 2 epochs on the embedded sample."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        patch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
        run_dir = tmp_path_factory.mktemp("tensorboard") / "elmo"
        train(ELMO_CONFIG, run_dir, overrides=FAST)
    return run_dir


# ------------------------------------------------------------------ TensorBoard events

def test_events_hold_batches_epochs_and_mix_weights(elmo_run: Path) -> None:
    found = scalars(elmo_run / "tensorboard")
    per_epoch = batches_per_epoch(elmo_run)
    assert steps(found["batch/loss"]) == batch_steps(2, per_epoch)
    assert steps(found["batch/f1"]) == batch_steps(2, per_epoch)  # the watched metric
    epoch_tags = ["training/loss", "training/f1", "training/tokens_per_s", "validation/loss",
                  "validation/f1", "validation/conlleval_f1", "validation/f1-PER", "epoch/lr",
                  "epoch/duration_s",
                  *[f"elmo/{ELMO}/input/layer_{j}" for j in range(3)], f"elmo/{ELMO}/input/gamma"]
    for tag in epoch_tags:
        assert steps(found[tag]) == [1, 2], tag
    for epoch in (1, 2):
        record = json.loads((elmo_run / f"metrics_epoch_{epoch}.json").read_text())
        assert found["validation/loss"][epoch - 1][1] == pytest.approx(record["validation_loss"])
        assert found["epoch/lr"][epoch - 1][1] == pytest.approx(record["lr"])
        [mix] = record["elmo_mixes"][ELMO]
        weights = [found[f"elmo/{ELMO}/input/layer_{j}"][epoch - 1][1] for j in range(3)]
        assert weights == pytest.approx(mix["weights"], abs=1e-6)
        assert sum(weights) == pytest.approx(1.0, abs=1e-5)  # softmax-normalised
        assert found[f"elmo/{ELMO}/input/gamma"][epoch - 1][1] == pytest.approx(mix["gamma"])


def test_recover_continues_the_steps(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):  # a crash in epoch 2, after batch events of it
        train(BASELINE, run_dir, overrides=FAST, callbacks=[StopAt(epoch=1, batch=12)])
    per_epoch = batches_per_epoch(run_dir)
    first = steps(scalars(run_dir / "tensorboard")["batch/loss"])
    assert first == [s for s in batch_steps(2, per_epoch) if s <= per_epoch + 12]
    train(BASELINE, run_dir, overrides=FAST, recover=True)
    files = sorted((run_dir / "tensorboard").glob("events.out.tfevents.*"))
    assert len(files) == 2  # one per start; the resumed one goes on where last.pt was
    resumed = scalars(files[1])
    assert steps(resumed["batch/loss"]) == [s for s in batch_steps(2, per_epoch)
                                            if s > per_epoch]
    assert steps(resumed["validation/f1"]) == [2]
    found = scalars(run_dir / "tensorboard")  # the crashed epoch's events are replaced
    assert steps(found["batch/loss"]) == batch_steps(2, per_epoch)
    assert steps(found["validation/f1"]) == [1, 2]
    assert steps(found["training/loss"]) == [1, 2]


def test_tensorboard_false_writes_no_events_and_progress_stays_plain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """One cheap run for two things: the off switch, and the trainer's progress display with
    stderr not a terminal (plain lines, here at every batch; no carriage returns)."""
    monkeypatch.setattr(progress_module, "PLAIN_INTERVAL_S", 0.0)
    run_dir = tmp_path / "run"
    train(BASELINE, run_dir, overrides=["trainer.num_epochs=1", "trainer.progress_bar=true",
                                        "data_loader.batch_size=8", "trainer.tensorboard=false"])
    assert (run_dir / "log.jsonl").is_file()
    assert not (run_dir / "tensorboard").exists()
    err = capfd.readouterr().err
    assert "\r" not in err
    plain = [line for line in err.splitlines() if line.startswith("epoch 1/1: ")]
    assert len(plain) == batches_per_epoch(run_dir)
    assert all(" batch (" in line and "loss=" in line for line in plain)


def test_without_the_tensorboard_package_a_warning_and_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # import fails
    callback = TensorBoardLog()
    with caplog.at_level(logging.WARNING):
        callback.on_start(tmp_path, {})
        callback.on_batch(0, 10, {"loss": 1.0})
        callback.on_epoch(1, {"epoch": 1, "training_loss": 1.0})
        callback.on_end({})
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "tensorboard is not installed" in warnings[0]
    assert "\n" not in warnings[0]
    assert not (tmp_path / "tensorboard").exists()


# ------------------------------------------------------------------ the ELMo mix line

def test_out_log_has_a_readable_mix_line_per_epoch(elmo_run: Path) -> None:
    log = (elmo_run / "out.log").read_text()
    number = r"\d+\.\d{3}"
    lines = re.findall(rf"ELMo mix '{re.escape(ELMO)}' \(input\): layer weights "
                       rf"{number} {number} {number}, gamma {number}$", log, re.MULTILINE)
    assert len(lines) == 2
    assert "{'weights'" not in log


def test_placements_are_named_as_the_config_places_them() -> None:
    assert placement_names(1) == ["input"]
    assert placement_names(2) == ["input", "output"]
    assert placement_names(1, at_input=False) == ["output"]
    assert placement_names(2, at_input=False) == ["output 1", "output 2"]
    config = {"model": {"token_embedders": {"elmo": {"type": "elmo", "at_input": False}}}}
    assert config_at_input(config) == {"elmo": False}
    mixes = {ELMO: [{"weights": [0.2, 0.3, 0.5], "gamma": 1.5}]}
    [mix] = mix_weights(mixes, config_at_input(config))
    assert (mix.placement, mix.weights, mix.gamma) == ("output", [0.2, 0.3, 0.5], 1.5)


# ------------------------------------------------------------------ progress display

class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_prints_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()  # not a TTY, like a log file
    bar = progress(range(3), total=3, desc="epoch 1/2", unit="batch", stream=stream,
                   interval=0)
    for _ in bar:
        bar.set_postfix({"loss": "1.2345"}, refresh=False)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert [line.split(",")[0] for line in lines] == [
        "epoch 1/2: 1/3 batch (33%)", "epoch 1/2: 2/3 batch (67%)", "epoch 1/2: 3/3 batch (100%)"]
    assert all(line.endswith("loss=1.2345") and "batch/s" in line for line in lines)


def test_progress_is_coarse_off_a_terminal_and_a_bar_on_one() -> None:
    quiet = io.StringIO()
    with progress(total=1000, unit="sentence", stream=quiet) as bar:
        for _ in range(100):
            bar.update(10)
    assert quiet.getvalue() == ""  # the default interval is far longer than this loop
    off = io.StringIO()
    assert list(progress(range(5), stream=off, enabled=False, interval=0)) == list(range(5))
    assert off.getvalue() == ""
    terminal = Terminal()
    assert list(progress(range(5), total=5, stream=terminal)) == list(range(5))
    assert "\r" in terminal.getvalue()  # tqdm's bar


def test_a_long_loop_ends_with_a_last_line(monkeypatch) -> None:
    from elmo_experiments import progress as progress_module

    clock = iter([0.0, 0.5, 2.0, 2.5, 2.8, 3.5])  # start, one per update, then the close
    monkeypatch.setattr(progress_module.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    with progress(total=4, unit="batch", stream=stream, interval=1.0) as bar:
        for _ in range(4):
            bar.update()  # a line at 2.0 s (count 2), none at 2.5 or 2.8: close writes 4/4
    lines = stream.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == ["2/4 batch (50%)", "4/4 batch (100%)"]
