"""Welch's and the seed-paired intervals, and the Tables 2-3 marks, against hand-computed
examples."""

from __future__ import annotations

import math

import pytest

from elmo_experiments.analysis.significance import (
    TOO_FEW,
    paired,
    render_difference,
    render_paired,
    t_quantile,
    versus_best,
    welch,
)


def test_welch_equal_spreads_matches_the_hand_computation() -> None:
    # a = [3, 4, 5], b = [1, 2, 3]: means 4 and 2, variances 1 and 1, n 3 and 3.
    # se = sqrt(1/3 + 1/3) = 0.816497; df = (2/3)^2 / ((1/3)^2/2 * 2) = 4 exactly;
    # t(0.975, 4) = 2.776445 (printed tables); half width 2.266947.
    difference = welch([3.0, 4.0, 5.0], [1.0, 2.0, 3.0])
    assert difference is not None
    assert difference.estimate == pytest.approx(2.0)
    assert difference.df == pytest.approx(4.0)
    assert difference.low == pytest.approx(2.0 - 2.776445 * math.sqrt(2 / 3), abs=1e-5)
    assert difference.high == pytest.approx(2.0 + 2.776445 * math.sqrt(2 / 3), abs=1e-5)
    assert not difference.excludes_zero
    assert difference.render() == "+2.00 [−0.27, +4.27]"


def test_welch_unequal_spreads_uses_the_satterthwaite_degrees() -> None:
    # a = [10, 11, 12, 13] (mean 11.5, s² 5/3), b = [1, 2] (mean 1.5, s² 1/2):
    # s²/n: 0.416667 and 0.25; df = 0.666667² / (0.416667²/3 + 0.25²/1) = 0.444444/0.120370
    # = 3.692308; a gap of 10 is far beyond the noise.
    difference = welch([10.0, 11.0, 12.0, 13.0], [1.0, 2.0])
    assert difference is not None
    assert difference.df == pytest.approx(3.692308, abs=1e-5)
    half = t_quantile(0.975, 3.692308) * math.sqrt(0.416667 + 0.25)
    assert difference.low == pytest.approx(10.0 - half, abs=1e-4)
    assert difference.excludes_zero
    assert difference.render().endswith("†")
    # between integer degrees of freedom: t(0.975, 3) = 3.182446 > t > t(0.975, 4)
    assert 2.776445 < t_quantile(0.975, 3.692308) < 3.182446


def test_fewer_than_two_seeds_give_no_interval() -> None:
    assert welch([1.0], [1.0, 2.0]) is None
    assert render_difference([1.0], [1.0, 2.0]) == TOO_FEW
    assert render_difference(None, [1.0, 2.0]) == "—"


def test_marks_against_the_row_best() -> None:
    marks = versus_best({"a": [90.0, 90.5, 91.0], "b": [80.0, 80.5, 81.0],
                         "c": [89.0, 91.0, 92.0], "d": [99.0], "e": []})
    assert marks == {"a": "≈", "b": "▼", "c": "best of n ≥ 2", "d": TOO_FEW}
    assert versus_best({"a": [1.0], "b": [2.0]}) == {"a": TOO_FEW, "b": TOO_FEW}
    # a higher mean on one seed: the best of the columns with two seeds says so
    assert versus_best({"a": [40.0, 41.0], "b": [45.0], "c": [30.0, 31.0]}) == {
        "a": "best of n ≥ 2", "b": TOO_FEW, "c": "▼"}
    assert versus_best({"a": [40.0, 41.0], "b": [35.0]}) == {"a": "best", "b": TOO_FEW}
    assert versus_best({"a": [1.0, 2.0]}) == {}


def test_paired_interval_matches_the_hand_computation() -> None:
    # a - b over seeds 1-3: 1, 2, 3 (seed 4 ran on one side only and is left out):
    # mean 2, s = 1, se = 1/sqrt(3) = 0.577350; t(0.975, 2) = 4.302653 (printed tables);
    # half width 2.484138.
    a = {1: 11.0, 2: 22.0, 3: 33.0, 4: 100.0}
    b = {1: 10.0, 2: 20.0, 3: 30.0}
    difference = paired(a, b)
    assert difference is not None
    assert (difference.n_a, difference.df) == (3, 2.0)
    assert difference.estimate == pytest.approx(2.0)
    assert difference.low == pytest.approx(2.0 - 2.484138, abs=1e-5)
    assert difference.high == pytest.approx(2.0 + 2.484138, abs=1e-5)
    assert render_paired(a, b) == "+2.00 [−0.48, +4.48]"
    # the same values unpaired: Welch's interval is far wider (the seeds' spread is shared)
    assert welch(list(a.values())[:3], list(b.values())).high > 20  # type: ignore[union-attr]


def test_a_steady_per_seed_gain_excludes_zero_only_when_paired() -> None:
    # the noise shared by both sides (10, 20, 30) cancels in the per-seed differences
    # 0.9, 1.0, 1.1: mean 1, s = 0.1, half width 4.302653 * 0.1 / sqrt(3) = 0.248414
    a = {1: 10.9, 2: 21.0, 3: 31.1}
    b = {1: 10.0, 2: 20.0, 3: 30.0}
    difference = paired(a, b)
    assert difference is not None and difference.excludes_zero
    assert difference.low == pytest.approx(1.0 - 0.248414, abs=1e-5)
    assert not welch(list(a.values()), list(b.values())).excludes_zero  # type: ignore[union-attr]


def test_paired_needs_two_shared_seeds() -> None:
    assert paired({1: 1.0, 2: 2.0}, {2: 1.0, 3: 2.0}) is None
    assert render_paired({1: 1.0, 2: 2.0}, {2: 1.0, 3: 2.0}) == TOO_FEW
    assert render_paired(None, {1: 1.0}) == "—"
    steady = paired({1: 2.0, 2: 3.0}, {1: 1.0, 2: 2.0})  # no spread: a zero-width interval
    assert steady is not None and (steady.low, steady.high) == (1.0, 1.0)
