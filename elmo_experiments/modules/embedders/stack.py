"""Concatenates any number of token embedders, each fed by the indexer of the same key."""

from __future__ import annotations

import torch


class EmbedderStack(torch.nn.Module):
    """``forward(tokens)`` embeds ``tokens[key]`` with ``embedders[key]`` and concatenates."""

    def __init__(self, embedders: dict[str, torch.nn.Module]) -> None:
        super().__init__()
        self.keys = sorted(embedders)
        self.embedders = torch.nn.ModuleDict({key: embedders[key] for key in self.keys})
        self.output_dim = sum(int(e.output_dim) for e in self.embedders.values())

    def forward(self, tokens: dict[str, torch.Tensor]) -> torch.Tensor:
        parts = [self.embedders[key](tokens[key]) for key in self.keys]  # each (batch, seq, d_k)
        return torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]  # (batch, seq, sum d_k)

    def extra_representations(self) -> list[torch.Tensor]:
        """Further outputs of the last forward (ELMo's mixes for the output placement)."""
        return [t for e in self.embedders.values() for t in getattr(e, "extra_representations", [])]

    def extra_dim(self) -> int:
        """Total width of the extra representations (ELMo at the output); 0 when none."""
        return sum(int(getattr(e, "extra_dim", 0)) for e in self.embedders.values())

    def regularization_penalty(self) -> torch.Tensor | None:
        """Sum of the embedders' own penalties (e.g. the scalar-mix λ·||w||²), if any."""
        penalties = [e.regularization_penalty() for e in self.embedders.values()
                     if hasattr(e, "regularization_penalty")]
        penalties = [p for p in penalties if p is not None]
        return sum(penalties) if penalties else None
