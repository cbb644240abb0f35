"""Accuracy, in percent, accumulated over batches: of classes (one per instance) or of tags."""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.metrics.metric import State, Unit


class CategoricalAccuracy:
    """Share of instances whose highest-scoring class is the gold one (ties: the lowest id),
    reported under ``name``."""

    def __init__(self, name: str = "accuracy") -> None:
        self.name = name
        self.names = (name,)
        self.reset()

    def reset(self) -> None:
        self.correct = 0
        self.total = 0

    def update(self, logits: torch.Tensor, gold: torch.Tensor) -> None:
        # logits: (batch, classes); gold: (batch,)
        self.add((logits.argmax(dim=-1) == gold).sum().item(), gold.numel())

    def add(self, correct: int, total: int) -> None:
        """Count ``correct`` right answers out of ``total`` (e.g. decoded tags)."""
        self.correct += int(correct)
        self.total += int(total)

    def compute(self) -> dict[str, float]:
        return {self.name: 100.0 * self.correct / self.total if self.total else 0.0}

    def state(self) -> State:
        return {"correct": self.correct, "total": self.total}

    def merge(self, state: State) -> None:
        self.add(state["correct"], state["total"])


class LabelAccuracy:
    """Accuracy, in percent, of the predicted labels (the predictions' ``label``) against the
    instances' gold ``label``: a classifier's accuracy over an evaluation pass, one unit per
    instance (what the paired bootstrap resamples where a task has no dataset metric)."""

    names = ("accuracy",)
    primary = "accuracy"
    unit = "instance"

    def units(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
              ) -> list[Unit]:
        units = []
        for number, (instance, record) in enumerate(zip(instances, predictions, strict=True)):
            if instance.get("label") is None:
                raise ValueError(f"instance {number}: no gold label to score against")
            units.append((f"instance {number}",
                          {"correct": int(record["label"] == instance["label"]), "total": 1}))
        return units

    def from_state(self, state: State) -> dict[str, float]:
        accuracy = CategoricalAccuracy()
        accuracy.merge({"correct": state.get("correct", 0), "total": state.get("total", 0)})
        return accuracy.compute()
