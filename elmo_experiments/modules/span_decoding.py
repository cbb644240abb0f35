"""Best-span decoding for extractive reading comprehension."""

from __future__ import annotations

import torch


def best_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, mask: torch.Tensor,
               max_length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The span (i, j) maximising ``start_logits[i] + end_logits[j]`` over i <= j, both in
    ``mask``, with at most ``max_length`` tokens (j - i < max_length); ties go to the earliest
    start, then the earliest end. Scores are summed in the inputs' dtype.

    start_logits, end_logits: (batch, seq); mask: (batch, seq) bool ->
    spans (batch, 2) inclusive token indices, and their scores (batch,).
    """
    batch, seq = start_logits.shape
    positions = torch.arange(seq, device=start_logits.device)
    gap = positions[None, :] - positions[:, None]  # (seq, seq): end - start
    allowed = gap >= 0
    if max_length is not None:
        allowed = allowed & (gap < max_length)
    allowed = allowed[None] & mask[:, :, None] & mask[:, None, :]  # (batch, seq, seq)
    scores = start_logits[:, :, None] + end_logits[:, None, :]  # (batch, start, end)
    scores = scores.masked_fill(~allowed, float("-inf"))
    best, flat = scores.reshape(batch, -1).max(-1)  # the first maximum: row-major order
    return torch.stack([flat // seq, flat % seq], dim=-1), best
