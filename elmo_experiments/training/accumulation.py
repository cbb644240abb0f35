"""Gradient accumulation: which batches make one optimizer step, and that step's sums."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class AccumulatedStep:
    """One optimizer step of ``every`` batches (fewer at the epoch's end, whose ``count``
    batches it knows); each batch's loss is weighted by its share of the step."""

    every: int
    count: int
    size: int = 1  # batches in this step
    batches: int = 0  # batches of this step so far
    loss: float = 0.0  # this rank's weighted sum of the finite losses
    tokens: int = 0  # text tokens, for the tokens/s figure

    def add(self, done: int, tokens: int) -> bool:
        """Count a batch (``done``: the epoch's batches before it); whether it opens a step."""
        first = self.batches == 0
        if first:
            self.size = min(self.every, self.count - done)
        self.batches += 1
        self.tokens += tokens
        return first

    @property
    def last(self) -> bool:
        """Whether the batch just added closes the step."""
        return self.batches == self.size

    def share(self, weight: float) -> float:
        """What a batch of ``weight`` multiplies its loss by for the step's gradient."""
        return weight / self.size

    def reset(self) -> None:
        """Ready for the next step."""
        self.loss, self.tokens, self.batches = 0.0, 0, 0
