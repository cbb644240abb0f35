"""Spans of a document: candidate enumeration within sentences, pruning by score, and Lee et
al.'s (2017) span representation g = [x_start; x_end; attention-weighted head; width feature]
with the bucketed distances between spans, shared by the span-based tasks (coreference, GAP).
"""

from __future__ import annotations

import torch

from elmo_experiments.modules.attention import masked_softmax
from elmo_experiments.modules.indexing import gather_rows

DISTANCE_BUCKETS = 10  # 0, 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+


def distance_buckets(distances: torch.Tensor) -> torch.Tensor:
    """Lee et al.'s buckets of a (non-negative, integer) distance: 0-4 alone, then powers of 2."""
    logs = torch.floor(torch.log2(distances.clamp(min=1).float())).long() + 3
    return torch.where(distances <= 4, distances, logs).clamp(max=DISTANCE_BUCKETS - 1)


def _head_weights(encoded: torch.Tensor, spans: torch.Tensor, head_scorer: torch.nn.Module,
                  max_width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each span's tokens and their soft-head attention weights: positions (batch, n, w) (past
    a span's end: its end again) and weights (batch, n, w) (0 past the end); w = max_width."""
    starts, ends = spans[..., 0], spans[..., 1]  # (batch, n)
    positions = starts[..., None] + torch.arange(max_width, device=spans.device)  # (batch, n, w)
    inside = positions <= ends[..., None]
    positions = torch.minimum(positions, ends[..., None])
    logits = head_scorer(encoded).squeeze(-1)  # (batch, T)
    head_logits = logits.gather(1, positions.flatten(1)).reshape(positions.shape)
    return positions, masked_softmax(head_logits, inside)


def span_representations(encoded: torch.Tensor, embedded: torch.Tensor, spans: torch.Tensor,
                         head_scorer: torch.nn.Module,
                         width_embedding: torch.nn.Embedding) -> torch.Tensor:
    """Lee et al.'s g for each span: its first and last encoded tokens, the attention-weighted
    sum of its token embeddings (the soft head; ``head_scorer`` scores each encoded token) and
    its width's embedding (``width_embedding`` has one row per width up to the maximum).

    encoded: (batch, T, e); embedded: (batch, T, d); spans: (batch, n, 2) inclusive, at most
    ``width_embedding.num_embeddings`` tokens wide -> (batch, n, 2e + d + f)."""
    starts, ends = spans[..., 0], spans[..., 1]  # (batch, n)
    positions, weights = _head_weights(encoded, spans, head_scorer,
                                       width_embedding.num_embeddings)  # (batch, n, w)
    words = gather_rows(embedded, positions)  # (batch, n, w, d)
    head = (weights[..., None] * words).sum(2)  # (batch, n, d)
    return torch.cat([gather_rows(encoded, starts), gather_rows(encoded, ends), head,
                      width_embedding(ends - starts)], dim=-1)


def projected_span_representations(encoded: torch.Tensor, embedded: torch.Tensor,
                                   spans: torch.Tensor, head_scorer: torch.nn.Module,
                                   width_embedding: torch.nn.Embedding,
                                   linear: torch.nn.Linear) -> torch.Tensor:
    """``linear(span_representations(...))`` without building g: the linear map splits over
    g's four parts, and each part is projected before it is gathered (every token once, not
    once per span it is in; the head's weighted sum commutes with the map). The same function;
    sums round differently. -> (batch, n, linear.out_features)."""
    starts, ends = spans[..., 0], spans[..., 1]  # (batch, n)
    e, d = encoded.shape[-1], embedded.shape[-1]
    w_first, w_last, w_head, w_width = linear.weight.split(
        [e, e, d, width_embedding.embedding_dim], dim=1)  # each (h, .)
    positions, weights = _head_weights(encoded, spans, head_scorer,
                                       width_embedding.num_embeddings)  # (batch, n, w)
    project = torch.nn.functional.linear
    head = (weights[..., None] * gather_rows(project(embedded, w_head), positions)).sum(2)
    widths = project(width_embedding.weight, w_width, linear.bias)  # (max width, h)
    return (gather_rows(project(encoded, w_first), starts)
            + gather_rows(project(encoded, w_last), ends) + head
            + widths[ends - starts])  # (batch, n, h)


class SpanRepresentation(torch.nn.Module):
    """``span_representations`` with its own parameters: a head scorer over ``encoded_dim``
    tokens and a ``feature_size`` embedding of each width up to ``max_span_width``; its
    ``output_dim`` is 2 * encoded_dim + embedded_dim + feature_size.

    The head scorer's bias cancels in the softmax over each span's tokens (its gradient is
    zero up to rounding), so it is frozen, not removed."""

    def __init__(self, encoded_dim: int, embedded_dim: int, max_span_width: int,
                 feature_size: int) -> None:
        super().__init__()
        self.head_scorer = torch.nn.Linear(encoded_dim, 1)
        self.head_scorer.bias.requires_grad_(False)
        self.width_embedding = torch.nn.Embedding(max_span_width, feature_size)
        self.output_dim = 2 * encoded_dim + embedded_dim + feature_size

    def forward(self, encoded: torch.Tensor, embedded: torch.Tensor,
                spans: torch.Tensor) -> torch.Tensor:
        return span_representations(encoded, embedded, spans, self.head_scorer,
                                    self.width_embedding)


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
