"""Dropout for the task models: ``Dropout`` (torch's, with a faster mask on the CPU) and
``VariationalDropout`` (one mask per sequence, shared over time steps)."""

from __future__ import annotations

import torch


def keep_mask(like: torch.Tensor, shape: tuple[int, ...] | torch.Size, p: float
              ) -> torch.Tensor:
    """A mask of ``shape``: 1 / (1 - p) with probability 1 - p, else 0 (``like``'s dtype and
    device). Drawn as uniform < 1 - p, which on the CPU costs about half of ``bernoulli_``."""
    keep = 1.0 - p
    return torch.rand(shape, dtype=like.dtype, device=like.device).lt_(keep).mul_(1.0 / keep)


class Dropout(torch.nn.Dropout):
    """``torch.nn.Dropout`` (same parameters and state) whose CPU mask is ``keep_mask``: one
    product forward and one backward, cheaper than torch's ``bernoulli_`` mask on the CPU
    (docs/speed.md). Elsewhere, and in place, torch's own."""

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if (not self.training or self.p == 0.0 or self.p == 1.0 or self.inplace
                or inputs.device.type != "cpu"):
            return super().forward(inputs)
        return inputs * keep_mask(inputs, inputs.shape, self.p)


class VariationalDropout(torch.nn.Module):
    """Drops the same features at every time step of a sequence (Gal & Ghahramani 2016)."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, dim)
        if not self.training or self.p == 0.0:
            return inputs
        return inputs * keep_mask(inputs, (inputs.shape[0], 1, inputs.shape[2]), self.p)
