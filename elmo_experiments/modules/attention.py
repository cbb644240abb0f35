"""Masked softmax and soft alignment, shared by the attention-based task models."""

from __future__ import annotations

import torch


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax over ``dim`` ignoring masked-out entries; a fully masked row gives zeros.

    ``mask`` broadcasts against ``logits`` (e.g. (batch, 1, keys) for (batch, queries, keys)).
    """
    filled = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
    weights = torch.softmax(filled, dim=dim)
    return weights * mask  # rows with no valid key: exactly zero, not uniform


def align(queries: torch.Tensor, keys: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """Each query's attention-weighted sum of ``keys`` under dot-product scores.

    queries: (batch, q, dim); keys: (batch, k, dim); key_mask: (batch, k) -> (batch, q, dim).
    """
    scores = queries @ keys.transpose(1, 2)  # (batch, q, k)
    return masked_softmax(scores, key_mask[:, None, :]) @ keys  # (batch, q, dim)


class TriLinearSimilarity(torch.nn.Module):
    """BiDAF's similarity: ``w · [a; b; a ∘ b] + bias`` for every pair of rows, computed
    without forming the pairs' (batch, m, n, 3d) concatenation."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight_a = torch.nn.Parameter(torch.empty(dim))
        self.weight_b = torch.nn.Parameter(torch.empty(dim))
        self.weight_ab = torch.nn.Parameter(torch.empty(dim))
        self.bias = torch.nn.Parameter(torch.zeros(()))
        bound = (6.0 / (3 * dim + 1)) ** 0.5  # Xavier-uniform over the (3d, 1) weight
        for weight in (self.weight_a, self.weight_b, self.weight_ab):
            torch.nn.init.uniform_(weight, -bound, bound)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # a: (batch, m, d); b: (batch, n, d) -> (batch, m, n)
        products = (a * self.weight_ab) @ b.transpose(1, 2)  # (batch, m, n)
        return (products + (a @ self.weight_a)[:, :, None] + (b @ self.weight_b)[:, None, :]
                + self.bias)
