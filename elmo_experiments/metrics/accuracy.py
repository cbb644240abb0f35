"""Classification accuracy, in percent, accumulated over batches."""

from __future__ import annotations

import torch


class CategoricalAccuracy:
    """Share of instances whose highest-scoring class is the gold one (ties: the lowest id)."""

    def __init__(self) -> None:
        self.correct = 0
        self.total = 0

    def update(self, logits: torch.Tensor, gold: torch.Tensor) -> None:
        # logits: (batch, classes); gold: (batch,)
        self.correct += int((logits.argmax(dim=-1) == gold).sum())
        self.total += int(gold.numel())

    def get_metric(self, reset: bool = False) -> float:
        value = 100.0 * self.correct / self.total if self.total else 0.0
        if reset:
            self.correct = self.total = 0
        return value
