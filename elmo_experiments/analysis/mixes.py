"""The learned ELMo scalar mixes of a run, named by placement, for logs, TensorBoard and plots.

A run records its mixes per epoch as ``elmo_mixes``: ``{module name: [{"weights": [s_0, ...],
"gamma": γ}, ...]}``, one entry per mix in config order. The first mix is ELMo at the input
unless the embedder has ``at_input: false``; every other mix is an output placement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MixWeights:
    """One scalar mix: its embedder's module name, its placement, the softmax-normalised
    layer weights and γ."""

    module: str
    placement: str
    weights: list[float]
    gamma: float

    @property
    def label(self) -> str:
        return f"{self.module} ({self.placement})"


def placement_names(count: int, at_input: bool = True) -> list[str]:
    """``input`` for the first mix when ELMo joins the input, then ``output`` (numbered when
    there are several)."""
    names = ["input"] if at_input and count else []
    outputs = count - len(names)
    names += ["output"] if outputs == 1 else [f"output {i + 1}" for i in range(outputs)]
    return names


def config_at_input(config: Mapping[str, Any] | None) -> dict[str, bool]:
    """``at_input`` of every ``elmo`` embedder in a resolved config, by its config key (the
    last part of its module name)."""
    found: dict[str, bool] = {}

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(item, Mapping) and item.get("type") == "elmo":
                    found[str(key)] = bool(item.get("at_input", True))
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(config)
    return found


def mix_weights(mixes: Mapping[str, list[dict[str, Any]]],
                at_input: Mapping[str, bool] | None = None) -> list[MixWeights]:
    """Every mix of an ``elmo_mixes`` record; ``at_input`` maps a module name or its last part
    to the embedder's ``at_input`` (default true)."""
    at_input = at_input or {}
    result = []
    for module, reports in mixes.items():
        first = at_input.get(module, at_input.get(module.rsplit(".", 1)[-1], True))
        names = placement_names(len(reports), first)
        result.extend(MixWeights(module, name, [float(w) for w in report["weights"]],
                                 float(report["gamma"]))
                      for name, report in zip(names, reports, strict=True))
    return result


def format_mix(mix: MixWeights) -> str:
    """``ELMo mix 'embedder.embedders.elmo' (input): layer weights 0.210 0.350 0.440, gamma
    1.030``: one log line."""
    weights = " ".join(f"{w:.3f}" for w in mix.weights)
    return f"ELMo mix {mix.module!r} ({mix.placement}): layer weights {weights}, gamma " \
           f"{mix.gamma:.3f}"
