"""Every shipped task config trains as it did before the framework refactor (``golden.py``)."""

from __future__ import annotations

import json

import pytest
from golden import ADDED, CONFIGS, GOLDEN, run

pytestmark = pytest.mark.slow  # every shipped config trained 3 epochs against the golden record

EXPECTED = json.loads(GOLDEN.read_text())


def test_every_shipped_config_has_a_golden_record() -> None:
    assert sorted(EXPECTED) == sorted(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_training_reproduces_the_golden_record(name: str) -> None:
    records = run(name)
    assert len(records) == len(EXPECTED[name])
    for epoch, (got, want) in enumerate(zip(records, EXPECTED[name], strict=True), start=1):
        added = sorted(key for key in set(got) - set(want) if key.startswith(ADDED))
        assert sorted(set(got) - set(added)) == sorted(want), f"epoch {epoch}: other metrics"
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-5, abs=1e-5), f"epoch {epoch}: {key}"
