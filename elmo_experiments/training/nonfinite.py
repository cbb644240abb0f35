"""Non-finite losses and gradients: a step's first problem, and whether to back it up."""

from __future__ import annotations

from collections.abc import Callable

import torch


class NonFiniteGuard:
    """The first non-finite figure of the current optimizer step (a loss, the gradient
    norm, another rank's); ``on_nonfinite`` says what the trainer does about it: ``stop``
    or ``skip`` the step. Under fp16 a non-finite loss is an overflow, the loss scaler's
    business, not a problem."""

    def __init__(self, on_nonfinite: str, fp16: bool, distributed: bool) -> None:
        self.stops = on_nonfinite == "stop"
        self.fp16 = fp16
        self.distributed = distributed
        self.problem: str | None = None

    def backward_anyway(self, finite: bool) -> bool:
        """Whether a batch's loss goes through backward: a finite one does; and every rank
        joins the gradient sum, and under fp16 an overflow is the scale's to deal with."""
        return finite or self.distributed or self.fp16

    def loss(self, loss: torch.Tensor) -> None:
        """A batch's loss was not finite."""
        if self.problem is None and not self.fp16:
            self.problem = f"the loss is {loss.item()}"

    def gradients(self, check: Callable[[], str | None]) -> None:
        """At the step's end, unless there already is a problem: ``check`` clips the
        gradients and describes a non-finite norm."""
        if self.problem is None:
            self.problem = check()

    def elsewhere(self, failed: float) -> None:
        """``failed``: how many ranks had a problem in this step."""
        if failed and self.problem is None:
            self.problem = "a non-finite loss or gradient on another rank"

    def reset(self) -> None:
        self.problem = None
