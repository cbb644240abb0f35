"""Trainer callbacks: a JSON-lines log (always on), TensorBoard events (on unless
``trainer.tensorboard: false``) and Weights & Biases (optional, offline)."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Any, Literal

from elmo_experiments.config.registry import register
from elmo_experiments.contracts import Callback
from elmo_experiments.data.files import write_error

__all__ = ["Callback", "JsonlLog", "TensorBoardLog", "WandbCallback"]

logger = logging.getLogger(__name__)


class JsonlLog(Callback):
    """Appends one JSON object per event to ``log.jsonl`` in the run directory."""

    def __init__(self, every: int = 10) -> None:
        self.every = every
        self.path: Path | None = None

    def _write(self, event: str, **data: Any) -> None:
        if self.path is None:
            return
        # an append-only log, not a file replaced whole: one line appended per event (a cut
        # leaves at most a torn last line), so it does not go through atomic_write
        try:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"event": event, "time": time.time(), **data}) + "\n")
        except OSError as error:  # a full disk's errors name no file: this names it
            raise write_error(self.path, error) from None

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None:
        self.path = run_dir / "log.jsonl"
        self._write("start")

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        if batch % self.every == 0:
            self._write("batch", epoch=epoch, batch=batch, **logs)

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        self._write("epoch", epoch=epoch, metrics=metrics)

    def on_end(self, metrics: dict[str, Any]) -> None:
        self._write("end", metrics=metrics)


class TensorBoardLog(Callback):
    """TensorBoard events in ``RUN_DIR/tensorboard/``; a one-line warning and nothing else
    when the ``tensorboard`` package is missing.

    ``batch/*``: the running training loss (and watched metric) every ``every`` batches, at
    the run-wide batch number. ``training/*``, ``validation/*``, ``epoch/*`` (learning rate,
    duration): every numeric figure of an epoch's record, at the epoch number (the learned
    mixes go through its ``writer``: ``modules/embedders/mixes.py``). Steps are absolute, so a
    resumed run continues them; its new event file hides the earlier file's events from the
    batch it resumes at on (those batches are trained again).
    """

    def __init__(self, every: int = 10) -> None:
        self.every = every
        self.directory: Path | None = None
        self.writer: Any = None
        self.batches_per_epoch = 0

    def set_batches_per_epoch(self, count: int) -> None:
        """Called by the trainer before training: numbers batches across epochs."""
        self.batches_per_epoch = count

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter  # noqa: F401
        except ImportError:
            logger.warning("tensorboard is not installed (pip install -e .[viz]): no TensorBoard "
                           "events are written")
            return
        self.directory = run_dir / "tensorboard"

    def _open(self, step: int) -> Any:
        """The writer, opened at the first event; ``step``: the first step it writes."""
        if self.writer is None and self.directory is not None:
            from torch.utils.tensorboard import SummaryWriter

            resumed = self.directory.is_dir() and any(self.directory.glob("events.out.*"))
            try:
                self.writer = SummaryWriter(str(self.directory),
                                            purge_step=step if resumed else None)
            except OSError as error:
                self._stop(error)
        return self.writer

    def _stop(self, error: OSError) -> None:
        """A failed write (a full disk): one warning naming the folder, and no more events
        (every figure is in the run's metrics files); training goes on."""
        logger.warning("%s: cannot write TensorBoard events (%s): no more are written in this "
                       "session", self.directory, getattr(error, "strerror", None) or error)
        writer, self.writer, self.directory = self.writer, None, None
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()

    def _write(self, scalars: list[tuple[str, float]], step: int) -> None:
        if self.writer is None:
            return
        try:
            for tag, value in scalars:
                self.writer.add_scalar(tag, value, step)
            self.writer.flush()
        except OSError as error:
            self._stop(error)

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        step = epoch * self.batches_per_epoch + batch
        self._open(step)
        if step % self.every == 0:
            self._write([(f"batch/{key}", value) for key, value in logs.items()], step)

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        self._open(epoch * self.batches_per_epoch + 1)
        scalars = []
        for key, value in metrics.items():
            if key == "epoch" or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            split, _, name = key.partition("_")
            scalars.append((f"{split}/{name}" if split in ("training", "validation")
                            else f"epoch/{key}", value))
        self._write(scalars, epoch)

    def on_end(self, metrics: dict[str, Any]) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError as error:
                self._stop(error)
            self.writer = None


class WandbCallback(Callback):
    """Logs to Weights & Biases, offline unless ``mode`` says otherwise; skipped if absent. A
    run resumed with ``--recover`` goes on logging into the same W&B run (its id is kept in
    ``last.pt``)."""

    def __init__(self, project: str = "elmo-experiments",
                 mode: Literal["offline", "online", "disabled"] = "offline",
                 name: str | None = None, tags: list[str] | None = None) -> None:
        self.settings = {"project": project, "mode": mode, "name": name, "tags": tags}
        self.run: Any = None
        self.run_id: str | None = None

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None:
        try:
            import wandb
        except ImportError:
            logger.warning("wandb is not installed; the wandb callback does nothing")
            return
        resume = {"id": self.run_id, "resume": "allow"} if self.run_id else {}
        self.run = wandb.init(dir=str(run_dir), config=config, reinit=True, **resume,
                              **self.settings)
        self.run_id = self.run.id

    def state_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.run_id = state.get("run_id")

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        if self.run is not None and batch % 10 == 0:
            self.run.log({f"batch/{k}": v for k, v in logs.items()})

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        if self.run is not None:
            numbers = {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
            self.run.log({"epoch": epoch, **numbers})

    def on_end(self, metrics: dict[str, Any]) -> None:
        if self.run is not None:
            self.run.summary.update(
                {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
            )
            self.run.finish()


register("callback", "wandb")(WandbCallback)
