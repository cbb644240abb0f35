"""The convergence rule: a run whose best epoch lies within ``patience`` of its epoch cap is
marked "not converged" in its summary group and in the tables."""

from __future__ import annotations

import pytest

from elmo_experiments.analysis.tables import NOT_CONVERGED, _ours
from elmo_experiments.sweeps.summary import converged, run_entry


def _entry(best: int, run: int, cap: int, patience: int | None) -> dict:
    metrics = {"test_f1": 90.0, "best_epoch": best, "epochs_completed": run}
    return run_entry(metrics, {}, ["test_f1"], {"num_epochs": cap, "patience": patience})


@pytest.mark.parametrize(("best", "run", "cap", "patience", "expected"), [
    (5, 8, 8, 3, True),  # stopped by patience at 8 = 5 + 3: converged, however close to the cap
    (6, 8, 8, 3, False),  # the cap stopped it 2 epochs after its best
    (8, 8, 8, 3, False),  # still improving at the cap
    (2, 5, 20, 3, True),
    (17, 20, 20, None, True),  # no early stopping: the rule's window is 3
    (18, 20, 20, None, False),
    (10, 20, 20, 10, True),
    (11, 20, 20, 10, False),
])
def test_the_rule(best: int, run: int, cap: int, patience: int | None, expected: bool) -> None:
    entry = _entry(best, run, cap, patience)
    assert entry["epochs"] == {"best": best, "run": run, "cap": cap, "patience": patience}
    assert converged(entry) is expected


def test_an_entry_without_epochs_says_nothing() -> None:
    assert converged(run_entry({"test_f1": 1.0}, {}, ["test_f1"])) is None
    assert converged({"metrics": {}}) is None


def test_a_table_cell_names_the_seeds_that_did_not_converge() -> None:
    figure = {"mean": 55.07, "std": 4.01, "n": 3, "values": [50.4, 57.4, 57.4]}
    group = {"metrics": {"test_accuracy": figure}, "not_converged": [3]}
    assert _ours(group, "test_accuracy") == f"55.07 ± 4.01 (3) {NOT_CONVERGED} (seed 3)"
    assert NOT_CONVERGED not in _ours({**group, "not_converged": []}, "test_accuracy")
