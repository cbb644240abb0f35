"""Candidate spans of a document: enumeration within sentences, and pruning by score."""

from __future__ import annotations

import torch


def enumerate_spans(sentence_ids: torch.Tensor, lengths: torch.Tensor,
                    max_width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every span of at most ``max_width`` tokens that lies inside one sentence, ordered by
    start, then end. sentence_ids: (batch, tokens), each token's sentence; lengths: (batch,)
    real tokens per document -> spans (batch, spans, 2) inclusive [start, end], 0 at padding,
    and their mask (batch, spans)."""
    batch, tokens = sentence_ids.shape
    starts = torch.arange(tokens, device=sentence_ids.device)[:, None]  # (tokens, 1)
    ends = starts + torch.arange(max_width, device=sentence_ids.device)[None, :]  # (tokens, w)
    inside = ends < lengths[:, None, None]  # (batch, tokens, w)
    clamped = ends.clamp(max=tokens - 1)
    same = sentence_ids.gather(1, clamped.reshape(1, -1).expand(batch, -1)).reshape(
        batch, tokens, max_width) == sentence_ids[:, :, None]  # (batch, tokens, w)
    valid = (inside & same).reshape(batch, -1)  # (batch, tokens * w), start-major
    pairs = torch.stack([starts.expand(-1, max_width), clamped], dim=-1).reshape(-1, 2)
    count = int(valid.sum(dim=1).max().item()) if batch else 0
    spans = torch.zeros(batch, max(count, 1), 2, dtype=torch.long, device=sentence_ids.device)
    mask = torch.zeros(batch, max(count, 1), dtype=torch.bool, device=sentence_ids.device)
    for row in range(batch):
        chosen = pairs[valid[row]]  # (n, 2), in start-then-end order
        spans[row, : len(chosen)] = chosen
        mask[row, : len(chosen)] = True
    return spans, mask


def prune_spans(scores: torch.Tensor, mask: torch.Tensor, keep: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``keep[b]`` best-scoring valid spans of each document, back in their original
    (document) order; ties go to the earlier span. scores, mask: (batch, spans); keep: (batch,)
    -> indices (batch, k) into the spans, k = max(keep), and their mask (batch, k)."""
    k = max(int(keep.max().item()), 1)
    filled = scores.masked_fill(~mask, float("-inf"))
    # a stable descending sort: equal scores keep their order (the earlier span first)
    order = torch.sort(filled, dim=1, descending=True, stable=True).indices[:, :k]  # (b, k)
    kept = torch.arange(k, device=scores.device)[None, :] < keep[:, None]  # (batch, k)
    # put the kept ones back in document order; the padding (kept = False) goes last
    position = torch.where(kept, order, order.new_full(order.shape, scores.shape[1]))
    position, _ = torch.sort(position, dim=1)
    kept = position < scores.shape[1]
    return position.clamp(max=scores.shape[1] - 1), kept
