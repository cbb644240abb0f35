"""The learned scalar mixes of a run, named by placement, and ``MixLog``, the trainer callback
that records them each epoch (the assembly, ``run.py``, adds it: the trainer knows no mix).

A run records its mixes per epoch as ``elmo_mixes``: ``{module name: [{"weights": [s_0, ...],
"gamma": γ}, ...]}``, one entry per mix in config order (the ``elmo`` and ``transformer``
embedders' ``mix_report()``). The first mix is at the input unless the embedder has
``at_input: false``; every other mix is an output placement. Each epoch ``MixLog`` adds
``elmo_mixes`` to the epoch's record (``metrics_epoch_N.json``, the best epoch's into
``metrics.json``), logs one ``ELMo mix ...`` line per mix, and writes each mix's normalised layer
weights and γ as TensorBoard scalars ``elmo/<module>/<placement>/layer_j`` and ``.../gamma``
through the run's TensorBoard callback (when it writes events).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from elmo_experiments.contracts import Callback, mix_placements, mix_reports

logger = logging.getLogger(__name__)


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


class MixLog(Callback):
    """Records, logs and plots the scalar mixes of ``model``'s modules (``mix_report()``)."""

    def __init__(self, model: torch.nn.Module, tensorboard: Callback | None = None) -> None:
        self.model = model
        self.tensorboard = tensorboard
        self.mixes: list[MixWeights] = []

    def epoch_record(self, epoch: int) -> dict[str, Any]:
        """Called by the trainer while it makes epoch ``epoch``'s record: ``elmo_mixes``."""
        reports = mix_reports(self.model)
        self.mixes = mix_weights(reports, mix_placements(self.model))
        for mix in self.mixes:
            logger.info(format_mix(mix))
        return {"elmo_mixes": reports} if reports else {}

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        """The mixes as TensorBoard scalars, after ``TensorBoardLog`` wrote the epoch's figures
        (it comes first among the callbacks, so its writer is open)."""
        writer = getattr(self.tensorboard, "writer", None)
        if writer is None or not self.mixes:
            return
        for mix in self.mixes:
            prefix = f"elmo/{mix.module}/{mix.placement.replace(' ', '_')}"
            for layer, weight in enumerate(mix.weights):
                writer.add_scalar(f"{prefix}/layer_{layer}", weight, epoch)
            writer.add_scalar(f"{prefix}/gamma", mix.gamma, epoch)
        writer.flush()


def mix_logs(model: torch.nn.Module, callbacks: list[Callback]) -> list[MixLog]:
    """A ``MixLog`` for a model with learned mixes, writing through the TensorBoard callback
    among ``callbacks`` (the one with a ``writer``) if any; none for a model without mixes."""
    if not mix_reports(model):
        return []
    tensorboard = next((c for c in callbacks if hasattr(c, "writer")), None)
    return [MixLog(model, tensorboard)]
