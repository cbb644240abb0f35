"""An exponential moving average of the trained weights, used for evaluation (BiDAF's, and
the paper's SQuAD setting: decay 0.999).

After every optimizer step each trainable parameter's shadow moves towards it:
``shadow <- d * shadow + (1 - d) * weight`` with ``d = min(decay, (1 + n) / (10 + n))`` after
``n`` earlier updates, so the first steps are not dominated by the random initialisation.
Validation passes and ``best.pt`` use the shadows; training continues from the raw weights.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from elmo_experiments.config.registry import Param

MOVING_AVERAGE_PARAMS = (
    Param("decay", float, 0.999, bounds=(0.0, 1.0),
          doc="the shadow keeps this share of itself at each update"),
)


class MovingAverage:
    """Shadows of ``model``'s trainable parameters, by name."""

    def __init__(self, model: torch.nn.Module, decay: float) -> None:
        self.decay = decay
        self.updates = 0
        self.names = [name for name, p in model.named_parameters() if p.requires_grad]
        parameters = dict(model.named_parameters())
        self.shadows = {name: parameters[name].detach().clone() for name in self.names}

    @torch.no_grad()
    def update(self, model: torch.nn.Module) -> None:
        """Move every shadow towards its parameter (after an optimizer step)."""
        rate = min(self.decay, (1.0 + self.updates) / (10.0 + self.updates))
        parameters = dict(model.named_parameters())
        for name in self.names:
            self.shadows[name].lerp_(parameters[name], 1.0 - rate)
        self.updates += 1

    @contextmanager
    def applied(self, model: torch.nn.Module) -> Iterator[None]:
        """The shadows in place of the weights inside the block; the weights back after it."""
        parameters = dict(model.named_parameters())
        saved = {name: parameters[name].detach().clone() for name in self.names}
        with torch.no_grad():
            for name in self.names:
                parameters[name].copy_(self.shadows[name])
        try:
            yield
        finally:
            with torch.no_grad():
                for name in self.names:
                    parameters[name].copy_(saved[name])

    def state_dict(self) -> dict[str, Any]:
        return {"decay": self.decay, "updates": self.updates, "shadows": self.shadows}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        missing = set(self.names) ^ set(state["shadows"])
        if missing:
            raise ValueError(f"moving average: the checkpoint's parameters differ from the "
                             f"model's: {', '.join(sorted(missing)[:5])}")
        self.updates = int(state["updates"])
        for name in self.names:
            self.shadows[name].copy_(state["shadows"][name])


@contextmanager
def maybe_applied(average: MovingAverage | None, model: torch.nn.Module) -> Iterator[None]:
    """``average.applied(model)``, or nothing when there is no moving average."""
    if average is None:
        yield
        return
    with average.applied(model):
        yield
