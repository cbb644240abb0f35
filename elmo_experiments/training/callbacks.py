"""Trainer callbacks: a JSON-lines log (always on) and Weights & Biases (optional, offline)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Protocol

from elmo_experiments.config.registry import Param, register

logger = logging.getLogger(__name__)


class Callback(Protocol):
    """Hooks the trainer calls; every method is optional in spirit but present here."""

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None: ...

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None: ...

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None: ...

    def on_end(self, metrics: dict[str, Any]) -> None: ...


class JsonlLog:
    """Appends one JSON object per event to ``log.jsonl`` in the run directory."""

    def __init__(self, every: int = 10) -> None:
        self.every = every
        self.path: Path | None = None

    def _write(self, event: str, **data: Any) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "time": time.time(), **data}) + "\n")

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


class WandbCallback:
    """Logs to Weights & Biases, offline unless ``mode`` says otherwise; skipped if absent."""

    def __init__(self, project: str = "elmo-experiments", mode: str = "offline",
                 name: str | None = None, tags: list[str] | None = None) -> None:
        self.settings = {"project": project, "mode": mode, "name": name, "tags": tags}
        self.run: Any = None

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None:
        try:
            import wandb
        except ImportError:
            logger.warning("wandb is not installed; the wandb callback does nothing")
            return
        self.run = wandb.init(dir=str(run_dir), config=config, reinit=True, **self.settings)

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


register("callback", "wandb", params=[
    Param("project", str, "elmo-experiments"),
    Param("mode", str, "offline", choices=("offline", "online", "disabled")),
    Param("name", str, None),
    Param("tags", list, None),
])(WandbCallback)
