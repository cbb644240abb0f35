"""A non-finite loss stops training (keeping the checkpoints) or, with ``on_nonfinite: skip``,
skips that batch's update; a non-finite gradient likewise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments.data.batching import Batch
from elmo_experiments.errors import TrainingStopped
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.training.trainer import Trainer

POISONED = 2  # the batch whose loss is NaN


class Scalar(torch.nn.Module):
    """loss = (w - target)^2, NaN for the poisoned batch; ``grad`` poisons the gradient."""

    def __init__(self, poison: str) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.poison = poison
        self.metrics = [CategoricalAccuracy()]

    def forward(self, step: torch.Tensor, **_: Any) -> dict[str, Any]:
        loss = (self.w - 1.0).pow(2).sum()
        if self.poison == "every" or (int(step) == POISONED and self.poison == "loss"):
            loss = loss * float("nan")
        elif int(step) == POISONED:  # a finite loss whose gradient is NaN: d sqrt(0) = inf * 0
            loss = loss + torch.sqrt(self.w - self.w.detach()).sum()
        return {"loss": loss}


class Steps:
    def batches(self, epoch: int):  # type: ignore[no-untyped-def]
        for step in range(1, 5):
            yield Batch({"step": torch.tensor(step)}, {}, 1, [step - 1], [{}])

    def num_batches(self, epoch: int) -> int:
        return 4

    def __len__(self) -> int:
        return 4


def trainer(poison: str, mode: str, tmp_path: Path) -> Trainer:
    model = Scalar(poison)
    settings = {"num_epochs": 1, "patience": None, "validation_metric": "-loss",
                "grad_norm": None, "grad_clipping": None, "on_nonfinite": mode,
                "progress_bar": False, "amp": None}
    return Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), None, Steps(), None,
                   settings, tmp_path, [])


@pytest.mark.parametrize("poison", ["loss", "grad"])
def test_stop_names_the_batch(poison: str, tmp_path: Path) -> None:
    with pytest.raises(TrainingStopped, match=rf"epoch 1 batch {POISONED}: the "
                                              rf"{'loss' if poison == 'loss' else 'gradient'}"
                                              r".*, or set trainer\.on_nonfinite=skip$"):
        trainer(poison, "stop", tmp_path).train_epoch(0)


def test_skip_stops_when_no_batch_is_finite_without_advising_skip(tmp_path: Path) -> None:
    with pytest.raises(TrainingStopped) as stopped:
        trainer("every", "skip", tmp_path).train_epoch(0)
    message = str(stopped.value)
    assert "epoch 1 batch 4: every batch of the epoch was non-finite" in message
    assert message.endswith("Lower the learning rate") and "on_nonfinite" not in message


@pytest.mark.parametrize("poison", ["loss", "grad"])
def test_skip_leaves_the_weights_as_they_were(poison: str, tmp_path: Path) -> None:
    skipping = trainer(poison, "skip", tmp_path)
    metrics = skipping.train_epoch(0)
    assert metrics["skipped_batches"] == 1
    w = 0.0
    for _ in range(3):  # three SGD steps on (w - 1)^2, the poisoned one left out
        w -= 0.1 * 2 * (w - 1.0)
    assert skipping.model.w.item() == pytest.approx(w)
    assert torch.isfinite(torch.tensor(metrics["loss"]))
