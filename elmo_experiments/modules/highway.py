"""Highway layers (Srivastava et al. 2015), as BiDAF applies them to its token embeddings."""

from __future__ import annotations

import torch


class Highway(torch.nn.Module):
    """``x <- g * x + (1 - g) * relu(W_t x)``, ``g = sigmoid(W_g x)``, per layer; the gates'
    biases start at 1 so that the layers begin by mostly carrying their input through."""

    def __init__(self, dim: int, layers: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(dim, 2 * dim) for _ in range(layers))
        for layer in self.layers:
            torch.nn.init.zeros_(layer.bias)
            with torch.no_grad():
                layer.bias[dim:].fill_(1.0)  # the carry gate's half
        self.output_dim = dim

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        # inputs: (..., dim) -> (..., dim)
        x = inputs
        for layer in self.layers:
            transform, gate = layer(x).chunk(2, dim=-1)
            carry = torch.sigmoid(gate)
            x = carry * x + (1.0 - carry) * torch.relu(transform)
        return x
