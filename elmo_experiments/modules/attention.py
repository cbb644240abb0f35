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
