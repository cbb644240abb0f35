"""Is a difference between two groups of runs more than seed noise?

Welch's t interval for the difference of two means over seeds (unequal variances, the
Welch-Satterthwaite degrees of freedom): ``elmo-exp tables`` gives each Table 1 row ELMo minus
baseline with its 95% interval, and marks the cells of Tables 2 and 3 that fall below their
row's best beyond seed noise. Fewer than two seeds on either side: no interval ("n too small").

Beside it, for every Table 1 comparison and lever, the seed-paired t interval: a seed gives
every variant of a sweep the same batches in the same order, so the per-seed differences
cancel the noise the variants share (``paired``). Welch's interval stays the tables' verdict.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

LEVEL = 0.95
TOO_FEW = "n too small"


@dataclass(frozen=True)
class Difference:
    """``mean(a) - mean(b)`` with its Welch interval at ``level``."""

    estimate: float
    low: float
    high: float
    df: float
    n_a: int
    n_b: int
    level: float = LEVEL

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def render(self) -> str:
        """``+0.83 [−1.40, +3.06]``, with ``†`` when the interval excludes 0."""
        mark = " †" if self.excludes_zero else ""
        return (f"{_signed(self.estimate)} [{_signed(self.low)}, {_signed(self.high)}]{mark}")


def _signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def t_quantile(probability: float, df: float) -> float:
    """The Student t distribution's quantile (scipy's, for non-integer degrees of freedom)."""
    from scipy.stats import t

    return float(t.ppf(probability, df))


def welch(a: list[float], b: list[float], level: float = LEVEL) -> Difference | None:
    """Welch's interval for ``mean(a) - mean(b)``; None when either side has under 2 values.

    Two sides without any spread (every seed equal on both) give a zero-width interval."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)  # (s² / n)
    estimate = statistics.fmean(a) - statistics.fmean(b)
    se = math.sqrt(va + vb)
    if se == 0.0:
        return Difference(estimate, estimate, estimate, math.inf, len(a), len(b), level)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = t_quantile(0.5 + level / 2, df) * se
    return Difference(estimate, estimate - half, estimate + half, df, len(a), len(b), level)


def paired(a: dict[int, float], b: dict[int, float], level: float = LEVEL
           ) -> Difference | None:
    """The t interval of the mean per-seed difference ``a[s] - b[s]`` over the seeds both ran
    (n - 1 degrees of freedom); None when under 2 seeds are shared."""
    seeds = sorted(a.keys() & b.keys())
    if len(seeds) < 2:
        return None
    differences = [a[s] - b[s] for s in seeds]  # (n,)
    estimate = statistics.fmean(differences)
    se = statistics.stdev(differences) / math.sqrt(len(seeds))
    df = float(len(seeds) - 1)
    half = t_quantile(0.5 + level / 2, df) * se if se > 0 else 0.0
    return Difference(estimate, estimate - half, estimate + half, df, len(seeds), len(seeds),
                      level)


def render_paired(a: dict[int, float] | None, b: dict[int, float] | None) -> str:
    """A table cell for ``paired`` (see ``render_difference``)."""
    return "—" if not a or not b else _cell(paired(a, b))


def render_difference(a: list[float] | None, b: list[float] | None) -> str:
    """A table cell: the interval, ``n too small``, or ``—`` when a side was not run."""
    return "—" if not a or not b else _cell(welch(a, b))


def _cell(difference: Difference | None) -> str:
    return TOO_FEW if difference is None else difference.render()


def versus_best(values: dict[str, list[float]]) -> dict[str, str]:
    """For each column of a row (its seeds' values), how it stands against the row's best
    mean: ``best``, ``≈`` (within seed noise of it), ``▼`` (below it beyond seed noise), or
    ``n too small``; columns without values are left out, and a row with one column has no
    marks. The best column is the highest mean among those with at least two seeds; where a
    column with fewer has a higher mean, it is marked ``best of n ≥ 2`` instead."""
    run = {name: v for name, v in values.items() if v}
    ranked = [name for name, v in run.items() if len(v) >= 2]
    if len(run) < 2 or not ranked:
        return {name: TOO_FEW for name, v in run.items() if len(v) < 2} if len(run) > 1 else {}
    best = max(ranked, key=lambda name: statistics.fmean(run[name]))
    top = max(statistics.fmean(v) for v in run.values())
    marks = {}
    for name, v in run.items():
        if name == best:
            marks[name] = "best" if statistics.fmean(v) >= top else "best of n ≥ 2"
            continue
        difference = welch(v, run[best])
        marks[name] = TOO_FEW if difference is None else (
            "▼" if difference.high < 0 else "≈")
    return marks
