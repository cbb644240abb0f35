"""A stack of linear layers, each followed by its activation and dropout."""

from __future__ import annotations

import torch

from elmo_experiments.errors import ConfigValueError
from elmo_experiments.modules.dropout import Dropout

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "linear": torch.nn.Identity}


class FeedForward(torch.nn.Module):
    """``dims[i]``-wide layers; ``activations`` and ``dropout`` per layer (one value: all)."""

    def __init__(self, input_dim: int, dims: list[int], activations: str | list[str] = "relu",
                 dropout: float | list[float] = 0.0) -> None:
        super().__init__()
        count = len(dims)
        activations = [activations] * count if isinstance(activations, str) else activations
        dropout = [dropout] * count if isinstance(dropout, (int, float)) else dropout
        if len(activations) != count or len(dropout) != count:
            raise ConfigValueError(f"feed-forward: {count} layers but {len(activations)} "
                                   f"activations and {len(dropout)} dropout values")
        unknown = sorted(set(activations) - set(ACTIVATIONS))
        if unknown:
            raise ConfigValueError(f"feed-forward: unknown activation {unknown[0]!r} "
                             f"(choose from {', '.join(ACTIVATIONS)})")
        layers: list[torch.nn.Module] = []
        size = input_dim
        for dim, activation, p in zip(dims, activations, dropout, strict=True):
            layers += [torch.nn.Linear(size, dim), ACTIVATIONS[activation](), Dropout(p)]
            size = dim
        self.layers = torch.nn.Sequential(*layers)
        self.output_dim = size

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.layers(inputs)  # (..., input_dim) -> (..., output_dim)
