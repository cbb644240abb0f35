"""The trainer's events, sent to every callback in order, and the callbacks' saved state."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.contracts import Callback

logger = logging.getLogger(__name__)


class CallbackEvents:
    """Sends each trainer event to the callbacks, in their order."""

    def __init__(self, callbacks: list[Callback]) -> None:
        self.callbacks = callbacks

    def batches_per_epoch(self, count: int) -> None:
        for callback in self.callbacks:
            callback.set_batches_per_epoch(count)

    def batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        for callback in self.callbacks:
            callback.on_batch(epoch, batch, logs)

    def epoch_record(self, epoch: int) -> dict[str, Any]:
        """What the callbacks add to epoch ``epoch``'s record (1-based), in their order."""
        added: dict[str, Any] = {}
        for callback in self.callbacks:
            added.update(callback.epoch_record(epoch))
        return added

    def epoch(self, epoch: int, record: dict[str, Any]) -> None:
        for callback in self.callbacks:
            callback.on_epoch(epoch, record)

    def before_backward(self, epoch: int, batch: int, loss: torch.Tensor) -> None:
        for callback in self.callbacks:
            callback.on_before_backward(epoch, batch, loss)

    def after_backward(self, epoch: int, batch: int) -> None:
        for callback in self.callbacks:
            callback.on_after_backward(epoch, batch)

    def before_optimizer_step(self, epoch: int, batch: int,
                              optimizer: torch.optim.Optimizer) -> None:
        for callback in self.callbacks:
            callback.on_before_optimizer_step(epoch, batch, optimizer)

    def after_optimizer_step(self, epoch: int, batch: int,
                             optimizer: torch.optim.Optimizer) -> None:
        for callback in self.callbacks:
            callback.on_after_optimizer_step(epoch, batch, optimizer)

    # -- state kept in last.pt ---------------------------------------------------------------
    def _keys(self) -> list[tuple[str, Callback]]:
        """Each stateful callback under its position and class name."""
        return [(f"{i}:{type(callback).__name__}", callback)
                for i, callback in enumerate(self.callbacks) if callback.stateful]

    def state_dict(self) -> dict[str, Any]:
        """The stateful callbacks' states, by position and class name."""
        return {key: callback.state_dict() for key, callback in self._keys()}

    def load_state_dict(self, states: dict[str, Any], path: Path) -> None:
        """Give each stateful callback its state from ``path`` (``last.pt``); one that has
        none there (added since, or moved) starts afresh, with a warning."""
        for key, callback in self._keys():
            if key in states:
                callback.load_state_dict(states[key])
            else:
                logger.warning("%s: holds no state for callback %s (at position %s): it "
                               "starts afresh", path, *reversed(key.split(":", 1)))
