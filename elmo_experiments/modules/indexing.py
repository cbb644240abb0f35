"""Row gathers shared by the encoders and the span models."""

from __future__ import annotations

import torch


def gather_rows(values: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Each batch row's vectors at ``positions``: values (batch, T, c), positions (batch, ...)
    -> (batch, ..., c). One ``index_select`` over the flattened rows (its backward one
    ``index_add_``), which costs a fraction of ``gather`` with an index expanded to c columns."""
    batch, length, dim = values.shape
    offsets = torch.arange(batch, device=positions.device) * length  # (batch,)
    flat = (positions.reshape(batch, -1) + offsets[:, None]).reshape(-1)  # (batch * m,)
    return values.reshape(batch * length, dim).index_select(0, flat).reshape(
        *positions.shape, dim)
