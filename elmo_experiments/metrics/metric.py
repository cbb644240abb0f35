"""The metric protocol: streamed metrics that models update batch by batch, and dataset-level
metrics that score a whole evaluation pass's predictions (often through an official format).

A streamed metric's ``state`` is plain counts; ``merge`` adds another replica's counts, so the
processes of a multi-process run can combine theirs before ``compute``. The shipped dataset
metrics are computed the same way, from the sum of their units' counts (a unit: a document, a
sentence, an article), which lets the paired bootstrap draw units (``analysis.bootstrap``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

State = dict[str, Any]  # numbers, or dicts of numbers (per chunk type), all of them sums
Unit = tuple[str, State]  # a resampling unit's name (a document's) and its counts


class Metric(Protocol):
    """``names``: what ``compute`` reports (``f1`` also covers per-type ``f1-PER``)."""

    names: tuple[str, ...]

    def update(self, *args: Any, **kwargs: Any) -> None: ...

    def compute(self) -> dict[str, float]: ...

    def reset(self) -> None: ...

    def state(self) -> State: ...

    def merge(self, state: State) -> None: ...


class DatasetMetric(Protocol):
    """Scores a dataset's instances against the model's predictions for them (``human_readable``
    records, in input order), and writes them in the task's official scorer format."""

    names: tuple[str, ...]

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]: ...

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None: ...


class UnitMetric(Protocol):
    """Figures over an evaluation pass from additive counts per unit (``unit`` says what one
    is: a document, a sentence). ``units`` gives each unit's counts, in input order (a name may
    recur: its counts add up); ``from_state`` turns summed counts into the figures, of which
    ``primary`` is the task's headline figure. Every shipped dataset metric is one too (its
    ``compute`` is ``from_state(total(units(...)))``): what ``elmo-exp compare`` needs."""

    names: tuple[str, ...]
    primary: str
    unit: str

    def units(self, instances: list[dict[str, Any]],
              predictions: list[dict[str, Any]]) -> list[Unit]: ...

    def from_state(self, state: State) -> dict[str, float]: ...


def add_states(total: State, other: State) -> State:
    """Element-wise sum of two states (nested dicts summed key by key)."""
    out = dict(total)
    for key, value in other.items():
        if isinstance(value, dict):
            out[key] = add_states(out.get(key, {}), value)
        else:
            out[key] = out.get(key, 0) + value
    return out


def total(units: Iterable[Unit]) -> State:
    """The sum of the units' counts, in order."""
    state: State = {}
    for _, counts in units:
        state = add_states(state, counts)
    return state


def compute_all(metrics: Iterable[Metric], reset: bool = False) -> dict[str, float]:
    """Every metric's figures in one dict (a later metric's name wins); then reset if asked."""
    values: dict[str, float] = {}
    for metric in metrics:
        values.update(metric.compute())
        if reset:
            metric.reset()
    return values


def metric_names(metrics: Iterable[Metric]) -> list[str]:
    return [name for metric in metrics for name in metric.names]
