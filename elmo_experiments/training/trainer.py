"""The training loop: epochs, validation with patience, checkpoints, exact recovery."""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.config.registry import AT_LEAST_ONE, Param, Spec, positive, suggest
from elmo_experiments.contracts import Callback, caches_in_use, objective
from elmo_experiments.devices import DEVICE_DOC
from elmo_experiments.errors import ConfigError, TrainingStopped
from elmo_experiments.faults import fault_point
from elmo_experiments.metrics.metric import DatasetMetric, compute_all, metric_names
from elmo_experiments.precision import AMP_CHOICES, autocast, effective_precision, grad_scaler
from elmo_experiments.progress import progress
from elmo_experiments.training.accumulation import AccumulatedStep
from elmo_experiments.training.callback_events import CallbackEvents
from elmo_experiments.training.distributed import (
    SINGLE,
    World,
    merge_metric_states,
    summed_metric_states,
)
from elmo_experiments.training.evaluation import Loader, evaluate
from elmo_experiments.training.loss_scaling import LossScaling
from elmo_experiments.training.moving_average import (
    MOVING_AVERAGE_PARAMS,
    MovingAverage,
    maybe_applied,
)
from elmo_experiments.training.nonfinite import NonFiniteGuard
from elmo_experiments.training.run_dir import (
    load_checkpoint,
    save_checkpoint,
    shapes,
    verify_checkpoint,
    write_json,
)

logger = logging.getLogger(__name__)

TRAINER_PARAMS = (
    Param("num_epochs", int, 20, bounds=AT_LEAST_ONE),
    Param("patience", int, None, doc="epochs without improvement before stopping",
          bounds=AT_LEAST_ONE),
    Param("validation_metric", str, "-loss", doc="+name to maximise, -name to minimise"),
    Param("grad_norm", float, None, doc="rescale gradients to this total norm", check=positive),
    Param("grad_clipping", float, None, doc="clip each gradient value to +-this",
          check=positive),
    Param("on_nonfinite", str, "stop", choices=("stop", "skip"),
          doc="a NaN/inf loss or gradient: stop training (keeping the last finite checkpoints) "
              "or skip that batch's update"),
    Param("optimizer", component="optimizer"),
    Param("learning_rate_scheduler", component="lr_scheduler", default=None),
    Param("callbacks", component="callback", sequence=True, default=[]),
    Param("progress_bar", bool, True),
    Param("tensorboard", bool, True, doc="write TensorBoard events into RUN_DIR/tensorboard/ "
          "(needs the tensorboard package: pip install -e .[viz])"),
    Param("device", str, "auto", doc=f"torch device to train on: {DEVICE_DOC}"),
    Param("cuda_device", int, None, doc="AllenNLP's name: -1 the CPU, N the N-th GPU"),
    Param("amp", str, None, choices=AMP_CHOICES, doc="mixed precision: products in bf16 (or "
          "fp16, with a dynamic loss scale) under autocast; weights, optimizer state and loss "
          "stay fp32"),
    Param("accumulation_steps", int, 1, bounds=AT_LEAST_ONE,
          doc="batches whose gradients are summed before each optimizer step"),
    Param("moving_average", fields=MOVING_AVERAGE_PARAMS, default=None,
          doc="evaluate (and keep as best.pt) an exponential moving average of the weights"),
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


def rng_states() -> dict[str, Any]:
    """This process's random number generator states: the CPU's, and its GPU's."""
    cuda = torch.cuda.get_rng_state() if torch.cuda.is_initialized() else None  # this
    # process's GPU
    return {"torch": torch.get_rng_state(), "cuda": cuda}


def restore_rng_states(checkpoint: dict[str, Any], world: World) -> None:
    """Put back the generator states ``last.pt`` holds: this rank's own when the run had as
    many ranks as now, else rank 0's (then a resumed multi-process run is not bit-exact)."""
    per_rank = checkpoint.get("rank_rngs") or [
        {"torch": checkpoint["torch_rng"], "cuda": checkpoint.get("cuda_rng")}]
    if len(per_rank) != world.size and world.main:
        logger.warning("last.pt was written by %d processes, and %d resume it: random draws "
                       "(dropout) will differ from an uninterrupted run", len(per_rank),
                       world.size)
    mine = per_rank[world.rank] if len(per_rank) == world.size else per_rank[0]
    torch.set_rng_state(mine["torch"])
    if mine.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(mine["cuda"])


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, (int, float, np.floating)) else value


class Trainer:
    """Trains ``model`` on a loader's batches; writes checkpoints and metrics into ``run_dir``.

    ``last.pt`` is written after every epoch, and mid-epoch when a SIGINT or SIGTERM stops the
    run (with the position in the epoch and the running sums), so ``restore`` resumes exactly.
    A non-finite loss or gradient stops training (``on_nonfinite: stop``) or skips the batch.
    In a multi-process run (``world``, see ``distributed``) the model is wrapped in
    DistributedDataParallel for training, every rank takes the same decisions from combined
    figures, and rank 0 alone writes files.
    """

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
        world: World = SINGLE,
    ) -> None:
        self.model = model  # unwrapped: evaluation, checkpoints, metrics
        self.world = world
        self.forward_model: torch.nn.Module = model  # what training batches go through
        if world.distributed:
            device = next(model.parameters()).device
            self.forward_model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[device] if device.type == "cuda" else None,
                broadcast_buffers=False, find_unused_parameters=True)
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.train_loader = train_loader
        self.validation_loader = validation_loader
        self.settings = settings
        self.run_dir = run_dir
        self.callbacks = callbacks
        self.events = CallbackEvents(callbacks)
        self.description = description or {}  # what checkpoints say about themselves
        self.dataset_metric = dataset_metric  # scores each validation pass as a whole
        metric = settings["validation_metric"]
        self.metric_name = metric[1:]
        self.maximise = metric.startswith("+")
        self.state = TrainState()
        self.partial: dict[str, Any] | None = None  # where a stopped epoch stopped
        self.stop_signal: int | None = None  # set by the SIGINT/SIGTERM handler
        average = settings.get("moving_average")
        self.average = MovingAverage(model, average["decay"]) if average else None
        self.loss_scaling = LossScaling(
            grad_scaler(settings.get("amp"), next(model.parameters()).device.type))

    @property
    def scaler(self) -> torch.amp.GradScaler:
        """fp16's loss scaler (disabled otherwise)."""
        return self.loss_scaling.scaler

    @scaler.setter
    def scaler(self, scaler: torch.amp.GradScaler) -> None:
        self.loss_scaling.scaler = scaler

    # -- checkpoints -------------------------------------------------------------------------
    def _save_last(self, partial: dict[str, Any] | None = None) -> None:
        rngs = self.world.gather(rng_states())  # a collective: every rank calls it
        if not self.world.main:
            return
        save_checkpoint(self.run_dir / "last.pt", {
            **self.description, "kind": "last", "parameters": shapes(self.model),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "moving_average": self.average.state_dict() if self.average is not None else None,
            "state": self.state.__dict__,
            "partial": partial,
            "scaler": self.loss_scaling.state_dict(),
            "callbacks": self.events.state_dict(),  # rank 0's: callbacks run there only
            "torch_rng": rngs[0]["torch"],  # rank 0's (and the only one in one process)
            "cuda_rng": rngs[0]["cuda"],
            "rank_rngs": rngs if self.world.distributed else None,
        })

    def restore(self) -> None:
        """Resume from ``last.pt`` (a no-op when the run stopped before its first epoch)."""
        path = self.run_dir / "last.pt"
        if not path.is_file():
            stale = [*self.run_dir.glob("metrics_epoch_*.json"), self.run_dir / "best.pt"]
            for leftover in stale if self.world.main else []:  # from an epoch whose
                leftover.unlink(missing_ok=True)  # last.pt was never written
            logger.warning("%s: no resumable checkpoint (the run stopped before one was "
                           "written): training from the start", path)
            return
        checkpoint = load_checkpoint(path)
        verify_checkpoint(checkpoint, path, "last", self.model, self.description)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.scheduler is not None and checkpoint["scheduler"] is not None:
            self.scheduler.load_state_dict(checkpoint["scheduler"])
        if self.average is not None:
            if checkpoint.get("moving_average") is None:
                raise ConfigError([f"trainer.moving_average: {path} was written without a "
                                   f"moving average; resume without it or train afresh"])
            self.average.load_state_dict(checkpoint["moving_average"])
        self.state = TrainState(**checkpoint["state"])
        for record in self.state.history if self.world.main else []:  # rewritten: a damaged
            write_json(self.run_dir / f"metrics_epoch_{record['epoch']}.json", record)
        self.partial = checkpoint.get("partial")
        if self.partial and self.partial.get("processes", 1) != self.world.size:
            logger.warning("%s: stopped mid-epoch with %d processes, resumed with %d: the "
                           "epoch's global batches differ, so epoch %d starts again", path,
                           self.partial.get("processes", 1), self.world.size,
                           self.state.epoch + 1)
            self.partial = None
        self.loss_scaling.load_state_dict(checkpoint.get("scaler"))
        self.events.load_state_dict(checkpoint.get("callbacks") or {}, path)
        if self.partial and self.partial["metrics"] is not None and not self.world.main:
            self.partial = {**self.partial, "metrics": None}  # rank 0 holds all ranks' sums
        self._refill_caches()
        restore_rng_states(checkpoint, self.world)
        where = (f"batch {self.partial['batches']} of epoch {self.state.epoch + 1}"
                 if self.partial else f"epoch {self.state.epoch}")
        logger.info("recovered after %s", where)

    def _refill_caches(self) -> None:
        """With activation caches on (a frozen encoder), redo the forward passes
        that filled them before the interruption, in the same order, so the resumed run reads
        the very vectors an uninterrupted one would (a cache fill depends on the batch it
        happened in)."""
        if not caches_in_use(self.model):
            return
        logger.info("refilling the activation caches as the first %d epochs filled them",
                    self.state.epoch)
        device = next(self.model.parameters()).device
        self.model.eval()
        with torch.no_grad():
            for epoch in range(self.state.epoch + (1 if self.partial else 0)):
                batches = self.train_loader.batches(epoch)
                if epoch == self.state.epoch and self.partial:
                    batches = islice(batches, self.partial["batches"])
                for batch in batches:
                    self.model(**batch.to(device).arguments())
                if self.validation_loader is not None and epoch < self.state.epoch:
                    for batch in self.validation_loader.batches(0):
                        self.model(**batch.to(device).arguments())
        compute_all(self.model.metrics, reset=True)

    # -- one pass ----------------------------------------------------------------------------
    def train_epoch(self, epoch: int) -> dict[str, float]:
        """One epoch (or the rest of a stopped one); raises ``TrainingStopped`` on a signal or
        a non-finite loss, after saving what can be resumed.

        With ``accumulation_steps`` k, every k batches (fewer at the epoch's end) make one
        optimizer step, each batch's loss divided by the step's batch count; a signal stops
        the run at a step's end."""
        self.model.train()
        partial = self.partial or {"batches": 0, "loss": 0.0, "tokens": 0, "skipped": 0,
                                   "elapsed": 0.0, "metrics": None}
        self.partial = None
        if partial["metrics"] is not None:
            for metric, state in zip(self.model.metrics, partial["metrics"], strict=True):
                metric.reset()
                metric.merge(state)
        total_loss, batches, skipped = partial["loss"], partial["batches"], partial["skipped"]
        count = (self.train_loader.num_batches(epoch)
                 if hasattr(self.train_loader, "num_batches") else len(self.train_loader))
        step = AccumulatedStep(self.settings.get("accumulation_steps", 1), count)
        guard = NonFiniteGuard(self.settings["on_nonfinite"], self.loss_scaling.enabled,
                               self.world.distributed)
        bar = progress(
            islice(self.train_loader.batches(epoch), batches, None),
            total=count, initial=batches, unit="batch",
            desc=f"epoch {epoch + 1}/{self.settings['num_epochs']}",
            enabled=self.settings["progress_bar"] and self.world.main,
        )
        device = next(self.model.parameters()).device
        tokens, start = partial["tokens"], time.perf_counter() - partial["elapsed"]
        for batch in bar:
            first = step.add(batches, batch.num_tokens)
            batches += 1
            batch = batch.to(device)
            if first:
                self.optimizer.zero_grad(set_to_none=True)
            self._forward_backward(epoch, batches, batch, step, guard, device)
            if not step.last:
                continue
            loss, step_tokens, step_skipped, stop = self._end_step(epoch, batches, step, guard)
            tokens += step_tokens
            skipped += step_skipped
            if loss is not None:
                total_loss += loss
            step.reset()
            guard.reset()
            logs = {"loss": total_loss / max(batches - skipped, 1)}
            metrics = compute_all(self.model.metrics)  # this rank's, while the epoch runs
            if self.metric_name in metrics:
                logs[self.metric_name] = metrics[self.metric_name]
            shown = {k: f"{v:.4f}" for k, v in logs.items()}
            if tokens:
                shown["tok/s"] = f"{tokens / (time.perf_counter() - start):.0f}"
            bar.set_postfix(shown, refresh=False)
            self.events.batch(epoch, batches, logs)
            fault_point(f"trainer:epoch:{epoch + 1}:batch:{batches}")
            if self.world.distributed:  # all ranks stop at the same step: a signal that
                # came after this step's sum counts at the next step
                stop = bool(stop)
                if stop and self.stop_signal is None:  # another rank was signalled
                    self.stop_signal = signal.SIGTERM
            else:
                stop = self.stop_signal is not None
            if stop:
                self._stop_on_signal(epoch, {
                    "batches": batches, "loss": total_loss, "tokens": tokens,
                    "processes": self.world.size,
                    "skipped": skipped, "elapsed": time.perf_counter() - start,
                    "metrics": summed_metric_states(self.model.metrics, self.world)})
        if batches and skipped == batches:
            self._stop_nonfinite(epoch, batches, "every batch of the epoch was non-finite")
        merge_metric_states(self.model.metrics, self.world)
        metrics = compute_all(self.model.metrics, reset=True)
        if tokens:
            metrics["tokens_per_s"] = tokens / (time.perf_counter() - start)
        if skipped:
            metrics["skipped_batches"] = skipped
        return {"loss": total_loss / max(batches - skipped, 1), **metrics}

    def _forward_backward(self, epoch: int, batches: int, batch: Any, step: AccumulatedStep,
                          guard: NonFiniteGuard, device: torch.device) -> None:
        """One batch's forward and backward pass; its loss joins the step's."""
        with self._synchronised(step.last):
            with autocast(self.settings.get("amp"), device.type):  # backward outside it
                output = self.forward_model(**batch.arguments())
                # the per-batch objective: the model's loss plus its penalty (the mixes')
                loss = objective(self.model, output)
            finite = bool(torch.isfinite(loss))
            if guard.backward_anyway(finite):
                self.events.before_backward(epoch, batches, loss)
                self.loss_scaling.backward(loss * step.share(batch.weight))
                self.events.after_backward(epoch, batches)
        if finite:
            step.loss += loss.item() * batch.weight
        else:
            guard.loss(loss)

    def _end_step(self, epoch: int, batches: int, step: AccumulatedStep,
                  guard: NonFiniteGuard) -> tuple[float | None, int, int, Any]:
        """Clip, combine the ranks' figures, and step the optimizer, or skip the step or stop
        on a non-finite figure. Returns what the step adds to the epoch's loss (None: nothing), its
        tokens (all ranks'), its skipped batches, and whether any rank was asked to stop."""
        guard.gradients(self._clip_and_check)
        step_loss, step_tokens, failed, stop = self.world.sum(
            [step.loss, step.tokens, guard.problem is not None, self.stop_signal is not None])
        guard.elsewhere(failed)
        problem, skipped = guard.problem, 0
        if problem is None:
            self.events.before_optimizer_step(epoch, batches, self.optimizer)
            problem = self.loss_scaling.step(self.optimizer)
            self.events.after_optimizer_step(epoch, batches, self.optimizer)
            if problem is not None:  # an fp16 overflow: the scaler skipped the step
                skipped = step.batches
                logger.info("epoch %d batch %d: %s; step skipped", epoch + 1, batches, problem)
        elif guard.stops:
            self._stop_nonfinite(epoch, batches, problem, skippable=True)
        else:
            skipped = step.batches
            logger.warning("epoch %d batch %d: %s; batch skipped", epoch + 1, batches, problem)
            self.optimizer.zero_grad(set_to_none=True)
        loss = None
        if problem is None:
            if self.average is not None:
                self.average.update(self.model)
            loss = step_loss / self.world.size
        return loss, int(step_tokens), skipped, stop

    def _synchronised(self, last: bool) -> Any:
        """DistributedDataParallel sums gradients across ranks on the last batch of a step
        only; the others accumulate locally."""
        if last or not self.world.distributed:
            return nullcontext()
        return self.forward_model.no_sync()  # type: ignore[operator]

    def _clip_and_check(self) -> str | None:
        """Clip as configured; a description of a non-finite gradient, or None."""
        parameters = [p for p in self.model.parameters() if p.grad is not None]
        self.loss_scaling.unscale(self.optimizer)  # clip the true gradients, not the scaled
        if self.settings["grad_clipping"] is not None:
            torch.nn.utils.clip_grad_value_(parameters, self.settings["grad_clipping"])
        if self.settings["grad_norm"] is not None:
            norm = torch.nn.utils.clip_grad_norm_(parameters, self.settings["grad_norm"])
        else:
            norm = torch.nn.utils.get_total_norm([p.grad for p in parameters])
        if self.loss_scaling.enabled:  # an fp16 overflow: the scaler skips the step and
            return None  # lowers the scale (that is its job, not a failure; counted as skipped)
        return None if torch.isfinite(norm) else f"the gradient norm is {norm.item()}"

    def _stop_nonfinite(self, epoch: int, batch: int, problem: str,
                        skippable: bool = False) -> None:
        """Stop on a non-finite figure; ``on_nonfinite: skip`` is advised only where it would
        have gone on: a batch's loss or gradient under ``on_nonfinite: stop`` (not an epoch in
        which no batch was finite, nor a non-finite validation figure)."""
        kept = (f"last.pt holds epoch {self.state.epoch}" if self.state.epoch
                else "no epoch finished, so there is no checkpoint")
        advice = "Lower the learning rate"
        if skippable and self.settings["on_nonfinite"] == "stop":
            advice += ", or set trainer.on_nonfinite=skip"
        raise TrainingStopped(
            f"{self.run_dir}: epoch {epoch + 1} batch {batch}: {problem}; training stopped "
            f"({kept}). {advice}")

    def _stop_on_signal(self, epoch: int, partial: dict[str, Any]) -> None:
        self._save_last(partial)
        name = signal.Signals(self.stop_signal).name
        message = (f"{self.run_dir}: stopped by {name} after batch {partial['batches']} of "
                   f"epoch {epoch + 1}; last.pt holds that point: resume with the same command "
                   f"and --recover")
        logger.warning(message)
        raise TrainingStopped(message, exit_code=128 + self.stop_signal)

    def _is_better(self, value: float) -> bool:
        best = self.state.best_value
        if best is None:
            return True
        return value > best if self.maximise else value < best

    # -- the loop ----------------------------------------------------------------------------
    def train(self) -> dict[str, Any]:
        """Run the remaining epochs; return the per-epoch record of the best epoch."""
        check_validation_metric(self.model, self.dataset_metric,
                                self.settings["validation_metric"])
        # said once, at the start: bf16 on a CPU without bf16 units runs in fp32 (autocast)
        effective_precision(self.settings.get("amp"), next(self.model.parameters()).device.type)
        self.events.batches_per_epoch(len(self.train_loader))  # numbering batches run-wide
        with stop_signals(self):
            self._epochs()
        return self.state.history[self.state.best_epoch - 1] if self.state.best_epoch else {}

    def _epochs(self) -> None:
        num_epochs = self.settings["num_epochs"]
        patience = self.settings["patience"]
        while self.state.epoch < num_epochs:
            if patience is not None and self.state.bad_epochs >= patience:
                break  # a recovered run that had already stopped early stays stopped
            epoch = self.state.epoch
            start = time.perf_counter() - (self.partial or {}).get("elapsed", 0.0)
            train_metrics = self.train_epoch(epoch)
            with maybe_applied(self.average, self.model):  # evaluated and kept: the average
                value, record = self._validate_and_keep(epoch, start, train_metrics)
            if self.scheduler is not None:
                if isinstance(self.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
                    self.scheduler.step(value)
                else:
                    self.scheduler.step()
            self.state.epoch = epoch + 1
            self.state.elapsed += record["duration_s"]
            self.state.history.append(record)
            if self.world.main:
                write_json(self.run_dir / f"metrics_epoch_{epoch + 1}.json", record)
            logger.info("epoch %d/%d %s %.4f (best %.4f at epoch %d) in %.1fs", epoch + 1,
                        num_epochs, self.metric_name, value, self.state.best_value,
                        self.state.best_epoch, record["duration_s"])
            self.events.epoch(epoch + 1, record)  # before last.pt, which keeps the callbacks'
            self._save_last()  # state as of the epoch's end (on_epoch included)
            if patience is not None and self.state.bad_epochs >= patience:
                logger.info("no improvement in %d epochs; stopping", patience)
                break

    def _validate_and_keep(self, epoch: int, start: float, train_metrics: dict[str, float]
                           ) -> tuple[float, dict[str, Any]]:
        """Validate the model as it is now, keep ``best.pt`` if this epoch is the best; the
        watched figure and the epoch's record."""
        validation = (evaluate(self.model, self.validation_loader, amp=self.settings.get("amp"),
                               dataset_metric=self.dataset_metric, world=self.world)
                      if self.validation_loader is not None else None)
        duration = time.perf_counter() - start
        watched = validation if validation is not None else train_metrics
        if self.metric_name not in watched:
            raise ConfigError([f"trainer.validation_metric: epoch {epoch + 1} reported no "
                               f"{self.metric_name!r} (it reported {', '.join(watched)})"])
        value = watched[self.metric_name]
        if not math.isfinite(value):
            self._stop_nonfinite(epoch, len(self.train_loader),
                                 f"validation {self.metric_name} is {value}")
        record = {"epoch": epoch + 1, "duration_s": duration,
                  "lr": self.optimizer.param_groups[0]["lr"],
                  **{f"training_{k}": _to_float(v) for k, v in train_metrics.items()},
                  **{f"validation_{k}": _to_float(v) for k, v in (validation or {}).items()}}
        record.update(self.events.epoch_record(epoch + 1))  # e.g. the learned mixes
        if self._is_better(value):
            self.state.best_value, self.state.best_epoch = value, epoch + 1
            self.state.bad_epochs = 0
            if self.world.main:
                save_checkpoint(self.run_dir / "best.pt", {
                    **self.description, "kind": "best", "parameters": shapes(self.model),
                    "model": self.model.state_dict(), "epoch": epoch + 1,
                    "metric": self.settings["validation_metric"],
                    self.settings["validation_metric"]: value})
        else:
            self.state.bad_epochs += 1
        return value, record


def check_validation_metric(model: torch.nn.Module, dataset_metric: DatasetMetric | None,
                            metric: str) -> None:
    """``metric`` (``+name``/``-name``) is one the model or the dataset metric reports."""
    name = metric[1:]
    compute_all(model.metrics, reset=True)
    known = ["loss", *metric_names(model.metrics),
             *(dataset_metric.names if dataset_metric is not None else ())]
    if name.split("-")[0] not in known:  # per-type names: f1-PER
        raise ConfigError([f"trainer.validation_metric: the model reports no "
                           f"{name!r}{suggest(name, known)}"])


def preemption_signal() -> signal.Signals:
    """The signal a cluster sends a job it is about to stop (preemption, time limit):
    submitit's, SIGUSR2 unless ``SUBMITIT_PREEMPT_SIGNAL`` names another."""
    name = os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2")
    return getattr(signal, f"SIG{name}", signal.SIGUSR2)


@contextmanager
def stop_signals(trainer: Trainer) -> Iterator[None]:
    """While training, SIGINT, SIGTERM and the preemption signal ask the trainer to stop
    after the current batch, with a resumable ``last.pt`` (a second SIGINT interrupts at
    once). Outside the main thread nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ask(signum: int, frame: Any) -> None:
        if trainer.stop_signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        trainer.stop_signal = signum
        logger.warning("%s received: stopping after this batch", signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, ask)
                for sig in (signal.SIGINT, signal.SIGTERM, preemption_signal())}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def build_scheduler(spec: Spec | None, optimizer: torch.optim.Optimizer, metric: str) -> Any:
    if spec is None:
        return None
    return spec.build(optimizer=optimizer, mode="max" if metric.startswith("+") else "min")
