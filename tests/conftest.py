"""Fixtures shared by the whole suite: tiny random biLMs in the released layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.weights import write_random_weights

# A biLM small enough to build in milliseconds: 2P = 8 output dims, F = 8 filters.
TINY = BilmOptions(cell_dim=16, projection_dim=4, filters=((1, 4), (2, 4)), n_highway=1,
                   char_embedding_dim=4)


@pytest.fixture(scope="session")
def tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny biLM in the released layout (seed 0)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm"), TINY, seed=0)


@pytest.fixture(scope="session")
def other_tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same architecture with other random weights (seed 1)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm_other"), TINY, seed=1)
