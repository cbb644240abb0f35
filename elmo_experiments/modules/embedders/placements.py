"""A contextual embedder's scalar mixes, one per placement (the input, then each output): the
part the ``elmo`` and ``transformer`` embedders share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from elmo_experiments.errors import ConfigValueError
from elmo_experiments.modules.embedders.scalar_mix import ScalarMix, mixes_report
from elmo_experiments.modules.embedders.stack import Embedded


class Placements(torch.nn.ModuleList):
    """One ``ScalarMix`` per placement config, each ``width`` wide. A ``ModuleList``, so the
    embedders' parameters keep their names (``mixes.N.scalar_parameters``). With ``at_input``
    false every mix is a further placement and the input part is empty."""

    def __init__(self, num_layers: int, width: int, mixes: Sequence[Mapping[str, Any]],
                 at_input: bool) -> None:
        if not mixes:
            raise ConfigValueError("mixes: at least one scalar mix (placement) is needed")
        super().__init__(ScalarMix(num_layers, **mix) for mix in mixes)
        self.width, self.at_input = width, at_input
        self.input_dim = width if at_input else 0  # the width at the input
        self.extra = len(self) - (1 if at_input else 0)  # the placements beyond the input

    def embed(self, layers: list[torch.Tensor], mask: torch.Tensor, dropout: torch.nn.Module,
              leading: Sequence[int], finish: Callable[[torch.Tensor], torch.Tensor] | None = None
              ) -> Embedded:
        """Every mix of ``layers`` (num_layers x (rows, seq, width); mask (rows, seq)),
        ``finish``ed (ELMo: BOS/EOS removed), dropped out and reshaped to ``leading`` (..., seq)
        + (width,)."""
        mixed = []
        for mix in self:
            out = mix(layers, mask)
            out = dropout(out if finish is None else finish(out))
            mixed.append(out.reshape(*leading, self.width))
        return Embedded.from_mixes(mixed, self.at_input)

    def report(self) -> list[dict[str, Any]]:
        """The normalised layer weights s and γ of every mix (logged each epoch)."""
        return mixes_report(self)
