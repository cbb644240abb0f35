"""Every shipped task config trains as it did before the framework refactor (``golden.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from golden import ADDED, CONFIGS, load_records, machine_kind, run

pytestmark = pytest.mark.slow  # every shipped config trained 3 epochs against the golden record

RECORDS = load_records()
KIND = machine_kind()
LOSSES = ("training_loss", "validation_loss")


def _guarded(got: dict[str, Any], want: dict[str, Any], epoch: int) -> None:
    added = sorted(key for key in set(got) - set(want) if key.startswith(ADDED))
    assert sorted(set(got) - set(added)) == sorted(want), f"epoch {epoch}: other metrics"


def test_every_shipped_config_has_a_golden_record() -> None:
    for kind, records in RECORDS.items():
        assert set(records) <= set(CONFIGS), kind  # no record of a config that is gone
    recorded = {name for records in RECORDS.values() for name in records}
    assert recorded == set(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_training_reproduces_the_golden_record(name: str) -> None:
    records = run(name)
    if name in RECORDS.get(KIND, {}):  # this kind's own record: every figure of every epoch, 1e-5
        want_all = RECORDS[KIND][name]
        assert len(records) == len(want_all)
        for epoch, (got, want) in enumerate(zip(records, want_all, strict=True), start=1):
            _guarded(got, want, epoch)
            for key, value in want.items():
                assert got[key] == pytest.approx(value, rel=1e-5, abs=1e-5), f"epoch {epoch}: {key}"
        return
    # another CPU rounds differently: the same figures, and first-epoch losses to 1e-3
    for kind, other in RECORDS.items():
        if name not in other:
            continue
        assert len(records) == len(other[name]), kind
        for epoch, (got, want) in enumerate(zip(records, other[name], strict=True), start=1):
            _guarded(got, want, epoch)
        for key in LOSSES:
            assert records[0][key] == pytest.approx(other[name][0][key], rel=1e-3), (kind, key)
