"""Concatenates any number of token embedders, each fed by the indexer of the same key."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from elmo_experiments.contracts import extra_dim


@dataclass
class Embedded:
    """What an embedder returns when it has more than the token input to give (ELMo): the part
    that joins the token input, and one representation per further placement, as values."""

    input: torch.Tensor  # (batch, seq, dim); width 0 when nothing joins the input
    extra: list[torch.Tensor] = field(default_factory=list)  # each (batch, seq, dim_k)

    def beside(self, encoded: torch.Tensor) -> torch.Tensor:
        """``encoded`` (..., seq, d) with the further placements concatenated after it (ELMo at
        the output of the layer that made ``encoded``): (..., seq, d + extra dims)."""
        return torch.cat([encoded, *self.extra], dim=-1) if self.extra else encoded

    @classmethod
    def from_mixes(cls, mixed: list[torch.Tensor], at_input: bool) -> Embedded:
        """One tensor per mix, (..., seq, dim): the first joins the input unless ``at_input``
        is false (then the input part is empty and every mix is a further placement)."""
        if not at_input:
            return cls(mixed[0][..., :0], mixed)  # (..., seq, 0)
        return cls(mixed[0], mixed[1:])


class EmbedderStack(torch.nn.Module):
    """``forward(tokens)`` embeds ``tokens[key]`` with ``embedders[key]`` and concatenates the
    input parts; the further placements (ELMo at the output) come back beside them."""

    def __init__(self, embedders: dict[str, torch.nn.Module]) -> None:
        super().__init__()
        self.keys = sorted(embedders)
        self.embedders = torch.nn.ModuleDict({key: embedders[key] for key in self.keys})
        self.output_dim = sum(int(e.output_dim) for e in self.embedders.values())

    def forward(self, tokens: dict[str, torch.Tensor]) -> Embedded:
        parts, extra = [], []
        for key in self.keys:
            out = self.embedders[key](tokens[key])  # a tensor (batch, seq, d_k), or Embedded
            if isinstance(out, Embedded):
                parts.append(out.input)
                extra.extend(out.extra)
            else:
                parts.append(out)
        joined = torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]  # (batch, seq, sum d_k)
        return Embedded(joined, extra)

    def extra_dim(self) -> int:
        """Total width of the extra representations (ELMo at the output); 0 when none."""
        return sum(extra_dim(e) for e in self.embedders.values())

