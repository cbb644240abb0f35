"""Viterbi decoding of a linear chain, shared by the CRF and the constrained taggers."""

from __future__ import annotations

import torch


def constraint_potentials(num_tags: int, constraints: list[tuple[int, int]]
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Transition, start and end scores that only forbid: 0 where ``constraints`` (allowed
    ``(from, to)`` pairs; ``num_tags`` is START, ``num_tags + 1`` END) allows, -inf elsewhere.
    Shapes (num_tags, num_tags), (num_tags,), (num_tags,)."""
    allowed = torch.zeros(num_tags + 2, num_tags + 2, dtype=torch.bool)
    for i, j in constraints:
        allowed[i, j] = True
    scores = torch.zeros(num_tags + 2, num_tags + 2).masked_fill(~allowed, float("-inf"))
    return (scores[:num_tags, :num_tags], scores[num_tags, :num_tags],
            scores[:num_tags, num_tags + 1])


@torch.no_grad()
def viterbi_decode(logits: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor,
                   start: torch.Tensor, end: torch.Tensor) -> list[tuple[list[int], float]]:
    """Best tag path of each sequence's unmasked prefix under emission ``logits``
    (batch, seq, tags), ``transitions`` (from, to), ``start`` and ``end`` (tags,) scores, with
    its score. A sequence with no finite path scores -inf and its path is arbitrary."""
    mask = mask.bool()
    batch_size, seq_len, _ = logits.shape
    step_mask = mask.t().unsqueeze(-1)  # (seq, batch, 1)
    transitions = transitions.to(logits.dtype).unsqueeze(0)  # (1, tags, tags)
    score = start.to(logits.dtype) + logits[:, 0]  # (batch, tags)
    backpointers = []
    for t in range(1, seq_len):
        best, best_prev = (score.unsqueeze(2) + transitions).max(dim=1)  # (batch, tags)
        score = torch.where(step_mask[t], best + logits[:, t], score)  # (batch, tags)
        backpointers.append(best_prev)  # (batch, tags)
    best_score, best_last = (score + end.to(logits.dtype)).max(dim=1)  # (batch,)

    lengths = mask.sum(dim=1).tolist()
    if backpointers:
        pointers = torch.stack(backpointers, dim=1).tolist()  # (batch, seq - 1, tags)
    else:
        pointers = [[] for _ in range(batch_size)]
    results = []
    for b, (tag, total) in enumerate(zip(best_last.tolist(), best_score.tolist(), strict=True)):
        path = [tag]
        row = pointers[b]
        for t in range(lengths[b] - 2, -1, -1):
            tag = row[t][tag]
            path.append(tag)
        path.reverse()
        results.append((path, total))
    return results
