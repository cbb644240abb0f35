"""Masked pooling over time: max, min, mean and self-attentive."""

from __future__ import annotations

import torch

from elmo_experiments.modules.attention import masked_softmax


def masked_max(inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, seq, dim), (batch, seq) -> (batch, dim): the maximum over valid positions."""
    return inputs.masked_fill(~mask[:, :, None], torch.finfo(inputs.dtype).min).amax(dim=1)


def masked_min(inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, seq, dim), (batch, seq) -> (batch, dim): the minimum over valid positions."""
    return inputs.masked_fill(~mask[:, :, None], torch.finfo(inputs.dtype).max).amin(dim=1)


def masked_mean(inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, seq, dim), (batch, seq) -> (batch, dim): the mean over valid positions."""
    total = (inputs * mask[:, :, None]).sum(dim=1)  # (batch, dim)
    return total / mask.sum(dim=1, keepdim=True).clamp(min=1)


class SelfAttentivePooling(torch.nn.Module):
    """A learned score per position, softmax over the valid ones, weighted sum (BCN's pool)."""

    def __init__(self, input_dim: int) -> None:
        super().__init__()
        self.scorer = torch.nn.Linear(input_dim, 1)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, dim); mask: (batch, seq)
        weights = masked_softmax(self.scorer(inputs).squeeze(-1), mask)  # (batch, seq)
        return (weights[:, :, None] * inputs).sum(dim=1)  # (batch, dim)
