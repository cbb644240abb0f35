"""Linear-chain conditional random field with optional transition constraints."""

from __future__ import annotations

import torch
from torch import nn

from elmo_experiments.modules.viterbi import viterbi_decode

# Score given to forbidden transitions in the likelihood: exp(-1e4) underflows to 0,
# yet everything stays finite (no NaN gradients even if a gold path is forbidden).
_FORBIDDEN_SCORE = -1e4


class ConditionalRandomField(nn.Module):
    """A linear-chain CRF over ``num_tags`` tags.

    ``constraints`` lists the ALLOWED ``(from, to)`` transitions, where index ``num_tags``
    is START and ``num_tags + 1`` is END. ``None`` allows every transition. Forbidden
    transitions get zero probability in the likelihood and are never decoded.
    """

    def __init__(
        self,
        num_tags: int,
        constraints: list[tuple[int, int]] | None = None,
        include_start_end_transitions: bool = True,
    ) -> None:
        super().__init__()
        self.num_tags = num_tags
        self.include_start_end_transitions = include_start_end_transitions
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags))  # (from, to)
        if include_start_end_transitions:
            self.start_transitions = nn.Parameter(torch.empty(num_tags))
            self.end_transitions = nn.Parameter(torch.empty(num_tags))
        else:
            self.register_parameter("start_transitions", None)
            self.register_parameter("end_transitions", None)

        self._constrained = constraints is not None
        forbidden = torch.zeros(num_tags + 2, num_tags + 2, dtype=torch.bool)
        if constraints is not None:
            forbidden.fill_(True)
            for i, j in constraints:
                forbidden[i, j] = False
        # Derived from the constructor arguments, so not part of the state dict.
        self.register_buffer("_forbidden", forbidden, persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_normal_(self.transitions)
        if self.include_start_end_transitions:
            nn.init.normal_(self.start_transitions)
            nn.init.normal_(self.end_transitions)

    def _potentials(self, fill: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Transition, start and end scores with forbidden entries replaced by ``fill``."""
        n = self.num_tags
        trans = self.transitions  # (num_tags, num_tags)
        if self.include_start_end_transitions:
            start, end = self.start_transitions, self.end_transitions  # (num_tags,)
        else:
            start = end = trans.new_zeros(n)  # (num_tags,)
        if self._constrained:
            forbidden = self._forbidden  # (num_tags + 2, num_tags + 2)
            trans = trans.masked_fill(forbidden[:n, :n], fill)  # (num_tags, num_tags)
            start = start.masked_fill(forbidden[n, :n], fill)  # (num_tags,)
            end = end.masked_fill(forbidden[:n, n + 1], fill)  # (num_tags,)
        return trans, start, end

    def _log_partition(
        self,
        logits: torch.Tensor,
        mask: torch.Tensor,
        trans: torch.Tensor,
        start: torch.Tensor,
        end: torch.Tensor,
    ) -> torch.Tensor:
        """Forward algorithm: log of the sum of exp-scores of all paths, per sequence."""
        trans = trans.unsqueeze(0)  # (1, num_tags, num_tags)
        step_mask = mask.t().unsqueeze(-1)  # (seq, batch, 1)
        alpha = start + logits[:, 0]  # (batch, num_tags)
        for t in range(1, logits.size(1)):
            scores = alpha.unsqueeze(2) + trans  # (batch, from, to)
            nxt = torch.logsumexp(scores, dim=1) + logits[:, t]  # (batch, num_tags)
            alpha = torch.where(step_mask[t], nxt, alpha)  # (batch, num_tags)
        return torch.logsumexp(alpha + end, dim=1)  # (batch,)

    def _path_score(
        self,
        logits: torch.Tensor,
        tags: torch.Tensor,
        mask: torch.Tensor,
        trans: torch.Tensor,
        start: torch.Tensor,
        end: torch.Tensor,
    ) -> torch.Tensor:
        """Unnormalised score of the given tag sequences, per sequence."""
        tags = tags.masked_fill(~mask, 0)  # (batch, seq); padding may hold any value
        emit = logits.gather(2, tags.unsqueeze(2)).squeeze(2)  # (batch, seq)
        score = emit.masked_fill(~mask, 0.0).sum(dim=1)  # (batch,)
        pair = trans[tags[:, :-1], tags[:, 1:]]  # (batch, seq - 1)
        score = score + pair.masked_fill(~mask[:, 1:], 0.0).sum(dim=1)  # (batch,)
        last_index = mask.sum(dim=1, keepdim=True) - 1  # (batch, 1)
        last_tags = tags.gather(1, last_index).squeeze(1)  # (batch,)
        return score + start[tags[:, 0]] + end[last_tags]  # (batch,)

    def forward(self, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Sum over the batch of ``log p(tags | logits)``.

        ``logits``: (batch, seq, num_tags); ``tags``: (batch, seq) long; ``mask``: (batch, seq)
        prefix mask with at least one ``True`` per row.
        """
        mask = mask.bool()
        trans, start, end = self._potentials(_FORBIDDEN_SCORE)
        log_numerator = self._path_score(logits, tags, mask, trans, start, end)  # (batch,)
        log_partition = self._log_partition(logits, mask, trans, start, end)  # (batch,)
        return (log_numerator - log_partition).sum()

    @torch.no_grad()
    def span_probabilities(self, logits: torch.Tensor,
                           spans: list[tuple[int, list[int]]]) -> list[float]:
        """For each ``(start, tag ids)``: the probability that the sentence's tags from
        ``start`` on are exactly those, summed over every path (exact: the partition over the
        paths that agree there, over the full partition). ``logits``: (seq, num_tags)."""
        if not spans:
            return []
        dtype = torch.float64 if logits.dtype == torch.float64 else torch.float32
        trans, start, end = (p.to(dtype) for p in self._potentials(_FORBIDDEN_SCORE))
        rows = logits.detach().to(dtype).unsqueeze(0).repeat(len(spans) + 1, 1, 1)
        for row, (first, ids) in enumerate(spans, start=1):  # row 0 stays free: the partition
            for position, tag in enumerate(ids, start=first):
                kept = rows[row, position, tag].clone()
                rows[row, position] = float("-inf")
                rows[row, position, tag] = kept
        mask = torch.ones(rows.shape[:2], dtype=torch.bool, device=rows.device)  # (rows, seq)
        log_z = self._log_partition(rows, mask, trans, start, end)
        return (log_z[1:] - log_z[0]).exp().tolist()

    def viterbi_tags(
        self, logits: torch.Tensor, mask: torch.Tensor
    ) -> list[tuple[list[int], float]]:
        """Best valid tag path of each sequence's unmasked prefix, with its score.

        Forbidden transitions score ``-inf``; if a sequence has no valid path at all its
        score is ``-inf`` and the returned path is arbitrary.
        """
        with torch.no_grad():
            return viterbi_decode(logits, mask, *self._potentials(float("-inf")))
