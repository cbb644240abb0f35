"""The task-specific scalar mix of biLM layers: γ · Σ_j s_j h_j (Peters et al. 2018, §3.2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch

from elmo_experiments.config.registry import NO_SETTINGS, NON_NEGATIVE, Param
from elmo_experiments.errors import ConfigValueError

MIX_MODES = ("learned", "last", "layer", "average", "fixed")
MIX_PARAMS = (
    Param("mode", str, "learned", choices=MIX_MODES,
          doc="learned softmax weights, the last layer, one layer, a fixed average or weights"),
    Param("layer", int, None, doc="the layer for mode 'layer' (0 = token layer)"),
    Param("weights", list, None, doc="fixed non-negative weights for mode 'fixed'"),
    Param("l2", float, 0.0, bounds=NON_NEGATIVE,
          doc="λ of the λ·||w||² penalty (mode 'learned')"),
    Param("layer_norm", bool, False, doc="normalise each layer over its unmasked entries"),
    Param("trainable_gamma", bool, None,
          doc="default: learned for learned/last/layer, frozen at 1 for average/fixed"),
)

# the embedders' default placements: one mix with its defaults (declared as [{}])
ONE_MIX: tuple[Mapping[str, Any], ...] = (NO_SETTINGS,)


def masked_layer_norm(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(h - mean) / sqrt(var + 1e-13)`` over all unmasked entries of the batch (no gain/bias)."""
    # tensor: (batch, seq, dim); mask: (batch, seq)
    weights = mask[:, :, None].to(tensor.dtype)
    count = weights.sum() * tensor.shape[2]
    mean = (tensor * weights).sum() / count
    variance = (((tensor - mean) * weights) ** 2).sum() / count
    return (tensor - mean) / torch.sqrt(variance + 1e-13)


class ScalarMix(torch.nn.Module):
    """Mixes ``num_layers`` same-shaped layers; the variant is chosen by ``mode``."""

    def __init__(self, num_layers: int, mode: str = "learned", layer: int | None = None,
                 weights: list[float] | None = None, l2: float = 0.0, layer_norm: bool = False,
                 trainable_gamma: bool | None = None) -> None:
        super().__init__()
        if mode not in MIX_MODES:
            raise ConfigValueError(f"mix mode {mode!r} is not one of {MIX_MODES}")
        self.mode, self.l2, self.layer_norm = mode, l2, layer_norm
        self.num_layers = num_layers
        fixed = torch.zeros(num_layers)
        if mode == "last":
            layer = num_layers - 1
        if mode in ("last", "layer"):
            if layer is None or not 0 <= layer < num_layers:
                raise ConfigValueError(f"mix layer {layer} is not in 0..{num_layers - 1}")
            fixed[layer] = 1.0
        elif mode == "average":
            fixed.fill_(1.0 / num_layers)
        elif mode == "fixed":
            valid = weights is not None and len(weights) == num_layers
            if not valid or min(weights) < 0 or not sum(weights):
                raise ConfigValueError(f"mix weights must be {num_layers} non-negative numbers")
            fixed = torch.tensor(weights, dtype=torch.float32) / sum(weights)
        self.scalar_parameters = torch.nn.Parameter(torch.zeros(num_layers),
                                                    requires_grad=mode == "learned")
        self.register_buffer("fixed_weights", fixed)
        if trainable_gamma is None:  # fixed mixing weights freeze w and γ (docs/paper.md)
            trainable_gamma = mode in ("learned", "last", "layer")
        self.gamma = torch.nn.Parameter(torch.ones(1), requires_grad=trainable_gamma)

    def normalized_weights(self) -> torch.Tensor:
        """s: softmax(w) when learned, the fixed weights otherwise; (num_layers,)."""
        if self.mode == "learned":
            return torch.softmax(self.scalar_parameters, dim=0)
        return self.fixed_weights

    def forward(self, layers: list[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        # layers: num_layers x (batch, seq, dim); mask: (batch, seq)
        if len(layers) != self.num_layers:
            raise ValueError(f"expected {self.num_layers} layers, got {len(layers)}")
        s = self.normalized_weights()
        total = None
        for index, layer in enumerate(layers):
            if self.mode != "learned" and self.fixed_weights[index] == 0:
                continue
            if self.layer_norm:
                layer = masked_layer_norm(layer, mask)
            term = s[index] * layer
            total = term if total is None else total + term
        assert total is not None
        return self.gamma * total  # (batch, seq, dim)

    def penalty(self) -> torch.Tensor | None:
        """λ·||w||² on the pre-softmax weights (learned mode with λ > 0 only)."""
        if self.mode != "learned" or self.l2 == 0.0:
            return None
        return self.l2 * (self.scalar_parameters ** 2).sum()


def mixes_report(mixes: Iterable[ScalarMix]) -> list[dict[str, Any]]:
    """The normalised layer weights s and γ of every mix (logged each epoch)."""
    return [{"weights": [round(w, 6) for w in mix.normalized_weights().detach().tolist()],
             "gamma": round(mix.gamma.item(), 6)} for mix in mixes]
