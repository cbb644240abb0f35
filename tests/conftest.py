"""Fixtures shared by the whole suite: tiny random biLMs in the released layout, and the
embedded samples for a whole module.

The suite's torch threads sleep while they wait for work (``OMP_WAIT_POLICY=PASSIVE``, set
before torch is imported, inherited by the commands the tests start): on a busy machine
spinning threads only take CPU from the processes they wait for. bf16 runs as asked on any CPU
(``ELMO_FORCE_BF16=1``): the tests of bf16 numerics need it, and ``tests/test_precision.py``
unsets it where it checks the fall-back to fp32 on CPUs without bf16 matrix units.

Under ``pytest -n N`` (``make test``: a worker per core) each worker and the commands it starts
compute on one thread, so that N workers share N cores rather than fight over them.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ELMO_FORCE_BF16", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixture_models import TINY

from elmo_experiments.bilm.weights import write_random_weights


@pytest.fixture(scope="session")
def tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny biLM in the released layout (seed 0)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm"), TINY, seed=0)


@pytest.fixture(scope="module")
def samples_only() -> Iterator[None]:
    """``ELMO_DATA_DIR`` unset for a module's runs: configs read the embedded samples."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        yield


@pytest.fixture(scope="session")
def other_tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same architecture with other random weights (seed 1)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm_other"), TINY, seed=1)
