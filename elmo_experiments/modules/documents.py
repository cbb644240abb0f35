"""A document batched as sentences, laid out as one sequence of tokens."""

from __future__ import annotations

import torch


def document_tokens(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, sentences, tokens, ...) -> (batch, document tokens, ...): each document's real
    tokens end to end (sentence after sentence), padding after them. mask: (batch, sentences,
    tokens)."""
    batch, sentences, width = mask.shape
    flat_mask = mask.reshape(batch, sentences * width)
    order = torch.sort((~flat_mask).to(torch.int8), dim=1, stable=True).indices
    flat = values.reshape(batch, sentences * width, *values.shape[3:])
    index = order.reshape(batch, -1, *([1] * (values.dim() - 3))).expand_as(flat)
    return flat.gather(1, index)
