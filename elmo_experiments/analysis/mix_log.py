"""The learned scalar mixes of a training run, seen each epoch: a trainer callback the
assembly (``run.py``) adds, so that the trainer itself knows nothing of ELMo.

Each epoch it adds ``elmo_mixes`` to the epoch's record (``metrics_epoch_N.json``, the best
epoch's into ``metrics.json``), logs one ``ELMo mix ...`` line per mix, and writes each mix's
normalised layer weights and γ as TensorBoard scalars ``elmo/<module>/<placement>/layer_j``
and ``.../gamma`` through the run's ``TensorBoardLog`` (when it writes events).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.analysis.mixes import MixWeights, format_mix, mix_weights
from elmo_experiments.contracts import mix_placements, mix_reports
from elmo_experiments.training.callbacks import Callback, TensorBoardLog

logger = logging.getLogger(__name__)


class MixLog:
    """Records, logs and plots the scalar mixes of ``model``'s modules (``mix_report()``)."""

    def __init__(self, model: torch.nn.Module, tensorboard: TensorBoardLog | None = None) -> None:
        self.model = model
        self.tensorboard = tensorboard
        self.mixes: list[MixWeights] = []

    def epoch_record(self, epoch: int) -> dict[str, Any]:
        """Called by the trainer while it makes epoch ``epoch``'s record: ``elmo_mixes``."""
        reports = mix_reports(self.model)
        self.mixes = mix_weights(reports, mix_placements(self.model))
        for mix in self.mixes:
            logger.info(format_mix(mix))
        return {"elmo_mixes": reports} if reports else {}

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None:
        pass

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        pass

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        """The mixes as TensorBoard scalars, after ``TensorBoardLog`` wrote the epoch's figures
        (it comes first among the callbacks, so its writer is open)."""
        writer = self.tensorboard.writer if self.tensorboard is not None else None
        if writer is None or not self.mixes:
            return
        for mix in self.mixes:
            prefix = f"elmo/{mix.module}/{mix.placement.replace(' ', '_')}"
            for layer, weight in enumerate(mix.weights):
                writer.add_scalar(f"{prefix}/layer_{layer}", weight, epoch)
            writer.add_scalar(f"{prefix}/gamma", mix.gamma, epoch)
        writer.flush()

    def on_end(self, metrics: dict[str, Any]) -> None:
        pass


def mix_logs(model: torch.nn.Module, callbacks: list[Callback]) -> list[MixLog]:
    """A ``MixLog`` for a model with learned mixes, writing through the run's
    ``TensorBoardLog`` if ``callbacks`` has one; none for a model without mixes."""
    if not mix_reports(model):
        return []
    tensorboard = next((c for c in callbacks if isinstance(c, TensorBoardLog)), None)
    return [MixLog(model, tensorboard)]
