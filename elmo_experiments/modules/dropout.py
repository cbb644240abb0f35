"""Variational (locked) dropout: one mask per sequence, shared over time steps."""

from __future__ import annotations

import torch


class VariationalDropout(torch.nn.Module):
    """Drops the same features at every time step of a sequence (Gal & Ghahramani 2016)."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, dim)
        if not self.training or self.p == 0.0:
            return inputs
        keep = 1.0 - self.p
        mask = inputs.new_empty(inputs.shape[0], 1, inputs.shape[2]).bernoulli_(keep)
        return inputs * mask.div_(keep)  # (batch, seq, dim)
