"""The training loop: epochs, validation with patience, checkpoints, exact recovery."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from elmo_experiments.config.registry import Param, Spec, suggest
from elmo_experiments.errors import ConfigError
from elmo_experiments.metrics.metric import DatasetMetric, compute_all, metric_names
from elmo_experiments.precision import autocast, warn_if_emulated
from elmo_experiments.training.callbacks import Callback
from elmo_experiments.training.evaluation import Loader, evaluate
from elmo_experiments.training.run_dir import load_checkpoint, save_checkpoint, write_json

logger = logging.getLogger(__name__)

TRAINER_PARAMS = (
    Param("num_epochs", int, 20),
    Param("patience", int, None, doc="epochs without improvement before stopping"),
    Param("validation_metric", str, "-loss", doc="+name to maximise, -name to minimise"),
    Param("grad_norm", float, None, doc="rescale gradients to this total norm"),
    Param("grad_clipping", float, None, doc="clip each gradient value to +-this"),
    Param("optimizer", component="optimizer"),
    Param("learning_rate_scheduler", component="lr_scheduler", default=None),
    Param("callbacks", component="callback", sequence=True, default=[]),
    Param("progress_bar", bool, True),
    Param("device", str, "cpu", doc="torch device to train on, e.g. cpu, cuda, cuda:1"),
    Param("amp", str, None, choices=("bf16",), doc="mixed precision: products in bf16 under "
          "autocast; weights, optimizer state and loss stay fp32"),
)


@dataclass
class TrainState:
    """Everything needed to resume exactly after a completed epoch."""

    epoch: int = 0
    best_epoch: int | None = None
    best_value: float | None = None
    bad_epochs: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, (int, float, np.floating)) else value


class Trainer:
    """Trains ``model`` on a loader's batches; writes checkpoints and metrics into ``run_dir``."""

    def __init__(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: Any,
        train_loader: Loader,
        validation_loader: Loader | None,
        settings: dict[str, Any],
        run_dir: Path,
        callbacks: list[Callback],
        description: dict[str, Any] | None = None,
        dataset_metric: DatasetMetric | None = None,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.train_loader = train_loader
        self.validation_loader = validation_loader
        self.settings = settings
        self.run_dir = run_dir
        self.callbacks = callbacks
        self.description = description or {}  # what checkpoints say about themselves
        self.dataset_metric = dataset_metric  # scores each validation pass as a whole
        metric = settings["validation_metric"]
        self.metric_name = metric[1:]
        self.maximise = metric.startswith("+")
        self.state = TrainState()

    # -- checkpoints -------------------------------------------------------------------------
    def _save_last(self) -> None:
        save_checkpoint(self.run_dir / "last.pt", {
            **self.description,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "state": self.state.__dict__,
            "torch_rng": torch.get_rng_state(),
        })

    def restore(self) -> None:
        """Resume from ``last.pt`` (a no-op when the run stopped before its first epoch)."""
        path = self.run_dir / "last.pt"
        if not path.is_file():
            return
        checkpoint = load_checkpoint(path)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.scheduler is not None and checkpoint["scheduler"] is not None:
            self.scheduler.load_state_dict(checkpoint["scheduler"])
        self.state = TrainState(**checkpoint["state"])
        torch.set_rng_state(checkpoint["torch_rng"])
        logger.info("recovered after epoch %d", self.state.epoch)

    # -- one pass ----------------------------------------------------------------------------
    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        total_loss, batches = 0.0, 0
        bar = tqdm(
            self.train_loader.batches(epoch),
            total=len(self.train_loader),
            desc=f"epoch {epoch + 1}/{self.settings['num_epochs']}",
            disable=not self.settings["progress_bar"], leave=False, dynamic_ncols=True,
        )
        device = next(self.model.parameters()).device
        tokens, start = 0, time.perf_counter()
        for batch in bar:
            tokens += batch.num_tokens  # text tokens, for the tokens/s figure
            batch = batch.to(device)
            self.optimizer.zero_grad(set_to_none=True)
            with autocast(self.settings.get("amp"), device.type):
                output = self.model(**batch.arguments())
            loss = output["loss"].float()  # the model's own per-batch objective
            loss.backward()
            if self.settings["grad_clipping"] is not None:
                torch.nn.utils.clip_grad_value_(self.model.parameters(),
                                                self.settings["grad_clipping"])
            if self.settings["grad_norm"] is not None:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings["grad_norm"])
            self.optimizer.step()
            total_loss += loss.item()
            batches += 1
            logs = {"loss": total_loss / batches}
            metrics = compute_all(self.model.metrics)
            if self.metric_name in metrics:
                logs[self.metric_name] = metrics[self.metric_name]
            shown = {k: f"{v:.4f}" for k, v in logs.items()}
            if tokens:
                shown["tok/s"] = f"{tokens / (time.perf_counter() - start):.0f}"
            bar.set_postfix(shown, refresh=False)
            for callback in self.callbacks:
                callback.on_batch(epoch, batches, logs)
        metrics = compute_all(self.model.metrics, reset=True)
        if tokens:
            metrics["tokens_per_s"] = tokens / (time.perf_counter() - start)
        return {"loss": total_loss / max(batches, 1), **metrics}

    def _is_better(self, value: float) -> bool:
        best = self.state.best_value
        if best is None:
            return True
        return value > best if self.maximise else value < best

    # -- the loop ----------------------------------------------------------------------------
    def train(self) -> dict[str, Any]:
        """Run the remaining epochs; return the per-epoch record of the best epoch."""
        compute_all(self.model.metrics, reset=True)
        known = ["loss", *metric_names(self.model.metrics),
                 *(self.dataset_metric.names if self.dataset_metric is not None else ())]
        if self.metric_name.split("-")[0] not in known:  # per-type names: f1-PER
            raise ConfigError([f"trainer.validation_metric: the model reports no "
                               f"{self.metric_name!r}{suggest(self.metric_name, known)}"])
        num_epochs = self.settings["num_epochs"]
        patience = self.settings["patience"]
        warn_if_emulated(self.settings.get("amp") or "fp32",
                         next(self.model.parameters()).device.type)
        while self.state.epoch < num_epochs:
            if patience is not None and self.state.bad_epochs >= patience:
                break  # a recovered run that had already stopped early stays stopped
            epoch = self.state.epoch
            start = time.perf_counter()
            train_metrics = self.train_epoch(epoch)
            amp = self.settings.get("amp")
            validation = (evaluate(self.model, self.validation_loader, amp=amp,
                                   dataset_metric=self.dataset_metric)
                          if self.validation_loader is not None else None)
            duration = time.perf_counter() - start
            watched = validation if validation is not None else train_metrics
            if self.metric_name not in watched:
                raise ConfigError([f"trainer.validation_metric: epoch {epoch + 1} reported no "
                                   f"{self.metric_name!r} (it reported {', '.join(watched)})"])
            value = watched[self.metric_name]
            record = {"epoch": epoch + 1, "duration_s": duration,
                      "lr": self.optimizer.param_groups[0]["lr"],
                      **{f"training_{k}": _to_float(v) for k, v in train_metrics.items()},
                      **{f"validation_{k}": _to_float(v) for k, v in (validation or {}).items()}}
            mixes = mix_reports(self.model)
            if mixes:
                record["elmo_mixes"] = mixes
                logger.info("ELMo layer weights: %s", mixes)
            if self._is_better(value):
                self.state.best_value, self.state.best_epoch = value, epoch + 1
                self.state.bad_epochs = 0
                save_checkpoint(self.run_dir / "best.pt",
                                {**self.description, "model": self.model.state_dict(),
                                 "epoch": epoch + 1, "metric": self.settings["validation_metric"],
                                 self.settings["validation_metric"]: value})
            else:
                self.state.bad_epochs += 1
            if self.scheduler is not None:
                if isinstance(self.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
                    self.scheduler.step(value)
                else:
                    self.scheduler.step()
            self.state.epoch = epoch + 1
            self.state.elapsed += duration
            self.state.history.append(record)
            write_json(self.run_dir / f"metrics_epoch_{epoch + 1}.json", record)
            self._save_last()
            logger.info("epoch %d/%d %s %.4f (best %.4f at epoch %d) in %.1fs", epoch + 1,
                        num_epochs, self.metric_name, value, self.state.best_value,
                        self.state.best_epoch, duration)
            for callback in self.callbacks:
                callback.on_epoch(epoch + 1, record)
            if patience is not None and self.state.bad_epochs >= patience:
                logger.info("no improvement in %d epochs; stopping", patience)
                break
        return self.state.history[self.state.best_epoch - 1] if self.state.best_epoch else {}


def mix_reports(model: torch.nn.Module) -> dict[str, list[dict[str, Any]]]:
    """Normalised layer weights and γ of every scalar mix in ``model``, by module name."""
    return {name: module.mix_report() for name, module in model.named_modules()
            if hasattr(module, "mix_report")}


def build_scheduler(spec: Spec | None, optimizer: torch.optim.Optimizer, metric: str) -> Any:
    if spec is None:
        return None
    return spec.build(optimizer=optimizer, mode="max" if metric.startswith("+") else "min")
