"""fp16's dynamic loss scale, in one place (with bf16 or fp32 it scales nothing)."""

from __future__ import annotations

from typing import Any

import torch


class LossScaling:
    """Scales the loss for the backward pass, unscales the gradients before clipping, and
    steps the optimizer unless they overflowed (then the scale goes down)."""

    def __init__(self, scaler: torch.amp.GradScaler) -> None:
        self.scaler = scaler

    @property
    def enabled(self) -> bool:
        return self.scaler.is_enabled()

    def backward(self, loss: torch.Tensor) -> None:
        self.scaler.scale(loss).backward()  # unscaled when disabled

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """The true gradients, for clipping (fp16 only)."""
        if self.enabled:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> str | None:
        """Step the optimizer; under fp16, a description of an overflow that made the scaler
        skip the step (the scale went down), else None."""
        if not self.enabled:
            optimizer.step()
            return None
        scale = self.scaler.get_scale()
        self.scaler.step(optimizer)  # skipped when the gradients overflowed
        self.scaler.update()
        if self.scaler.get_scale() < scale:  # they did: the scale went down
            return f"fp16 overflow (loss scale {scale:g} -> {self.scaler.get_scale():g})"
        return None

    def state_dict(self) -> dict[str, Any] | None:
        return self.scaler.state_dict() if self.enabled else None

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        if self.enabled and state:
            self.scaler.load_state_dict(state)
