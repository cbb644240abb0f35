"""The paired bootstrap over a test set's units (documents, articles, sentences, instances).

Two systems, A and B, scored on the same test set. Draw the set's units again, with replacement,
as many as it has; score both systems on the draw; repeat. The spread of B's score minus A's
over the draws is what the difference would do had other documents of the same kind been the
test set (Efron and Tibshirani 1993; Koehn 2004; Berg-Kirkpatrick et al. 2012). Both systems are
scored on the same draws, so what the two get right or wrong together cancels.

It says nothing about training seeds: it holds one trained model of each system fixed. The seed
intervals (``analysis.significance``) answer that; this one answers "would another test set
agree", and the two together bound what a single comparison can claim.

Every metric here is a sum of per-unit counts turned into figures (``UnitMetric``), so a draw is
a weighted sum of the units' counts and no instance is scored twice. The whole set's figures
are the counts summed in input order, as the metric itself sums them: the official figures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from elmo_experiments.metrics.metric import State, Unit, add_states, total

CHUNK = 500  # draws weighed at once (a CHUNK x units matrix)
TOLERANCE = 1e-9  # figures (percentages) this close are one
Key = tuple[str, ...]  # a count's path in a (nested) state


@dataclass(frozen=True)
class PairedBootstrap:
    """B minus A on the whole test set (``difference``), the 95% percentile interval of the
    drawn differences (``low``, ``high``) and the two-sided p-value: the share of draws whose
    difference lies at least ``|difference|`` from ``difference``. That is the drawn
    differences shifted to mean 0 (the null) as in Berg-Kirkpatrick et al. 2012, whose test is
    one-sided; here both directions count."""

    metric: str
    units: int
    samples: int
    seed: int
    a: float
    b: float
    difference: float
    low: float
    high: float
    p_value: float

    @property
    def beyond_noise(self) -> bool:
        """Whether the interval excludes zero."""
        return self.low > 0 or self.high < 0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "beyond_noise": self.beyond_noise}


def grouped(units: Sequence[Unit]) -> dict[str, State]:
    """Each unit name's summed counts, in the order the names first come."""
    groups: dict[str, State] = {}
    for name, counts in units:
        groups[name] = add_states(groups.get(name, {}), counts)
    return groups


def _paths(state: State, prefix: Key = ()) -> list[Key]:
    paths: list[Key] = []
    for key, value in state.items():
        paths.extend(_paths(value, (*prefix, key)) if isinstance(value, dict)
                     else [(*prefix, key)])
    return paths


def _get(state: State, path: Key) -> float:
    for key in path:
        if key not in state:
            return 0.0
        state = state[key]
    return float(state)  # type: ignore[arg-type]


def counts_matrix(states: Sequence[State]) -> tuple[list[Key], np.ndarray]:
    """The counts every state has (a path per count, in first-seen order) and a matrix of them:
    (units, counts), 0 where a unit lacks one."""
    paths = list(dict.fromkeys(path for state in states for path in _paths(state)))
    return paths, np.array([[_get(state, path) for path in paths] for state in states],
                           dtype=np.float64).reshape(len(states), len(paths))


def as_state(paths: Sequence[Key], row: np.ndarray) -> State:
    """The nested state whose counts at ``paths`` are ``row``."""
    state: State = {}
    for path, value in zip(paths, row.tolist(), strict=True):
        place = state
        for key in path[:-1]:
            place = place.setdefault(key, {})
        place[path[-1]] = value
    return state


def differences(weights: np.ndarray, a: tuple[list[Key], np.ndarray],
                b: tuple[list[Key], np.ndarray], score: Callable[[State], float]) -> np.ndarray:
    """B's score minus A's for each draw: ``weights`` (draws, units) says how often each unit
    is drawn; ``a`` and ``b`` are the two systems' ``counts_matrix`` (units in one order)."""
    (a_paths, a_counts), (b_paths, b_counts) = a, b  # counts: (units, a's or b's counts)
    drawn_a, drawn_b = weights @ a_counts, weights @ b_counts  # (draws, counts)
    return np.array([score(as_state(b_paths, row_b)) - score(as_state(a_paths, row_a))
                     for row_a, row_b in zip(drawn_a, drawn_b, strict=True)])


def paired_bootstrap(a_units: Sequence[Unit], b_units: Sequence[Unit],
                     score: Callable[[State], float], metric: str,
                     samples: int = 10_000, seed: int = 0) -> PairedBootstrap:
    """The paired bootstrap of B against A over their common units (every unit name of one
    must be the other's): ``score`` turns summed counts into the metric."""
    a, b = grouped(a_units), grouped(b_units)
    if a.keys() != b.keys():
        only = sorted(a.keys() - b.keys()) or sorted(b.keys() - a.keys())
        side = "A" if a.keys() - b.keys() else "B"
        raise ValueError(f"the two systems were scored on different units: {only[0]!r} is "
                         f"only {side}'s ({len(a)} units against {len(b)})")
    if samples < 1:
        raise ValueError(f"samples: {samples}, must be at least 1")
    if not a:
        raise ValueError("no units to draw: the test set is empty")
    names = list(a)
    a_counts = counts_matrix([a[name] for name in names])
    b_counts = counts_matrix([b[name] for name in names])
    whole_a, whole_b = score(total(a_units)), score(total(b_units))  # as the official sums
    rng = np.random.default_rng(seed)
    uniform = np.full(len(names), 1 / len(names))
    drawn = np.concatenate([
        differences(rng.multinomial(len(names), uniform, size=min(CHUNK, samples - done))
                    .astype(np.float64), a_counts, b_counts, score)
        for done in range(0, samples, CHUNK)])
    difference = whole_b - whole_a
    low, high = np.quantile(drawn, [0.025, 0.975])
    # (a draw exactly |difference| away counts, whatever the float rounding of the sums)
    p_value = float(np.mean(np.abs(drawn - difference) >= abs(difference) - TOLERANCE))
    return PairedBootstrap(metric, len(names), samples, seed, whole_a, whole_b, difference,
                           float(low), float(high), p_value)

