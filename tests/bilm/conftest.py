"""Shared pieces of the biLM tests: the reference fixtures (outside the repo) and tiny biLMs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.weights import write_random_weights

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("ELMO_FIXTURES_DIR", REPO.parent / "shared" / "fixtures" / "elmo"))

# A biLM small enough to build in milliseconds: 2P = 8 output dims, F = 8 filters.
TINY = BilmOptions(cell_dim=16, projection_dim=4, filters=((1, 4), (2, 4)), n_highway=1,
                   char_embedding_dim=4)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The reference fixture folder; tests needing it are skipped when it is absent."""
    if not (FIXTURES / "lm_weights.hdf5").is_file() or not (FIXTURES / "options.json").is_file():
        pytest.skip(f"ELMo reference fixtures not found at {FIXTURES} (set ELMO_FIXTURES_DIR)")
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_bilm_dir(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A biLM directory (options.json + weights.hdf5) holding the fixture model."""
    directory = tmp_path_factory.mktemp("fixture_bilm")
    (directory / "options.json").symlink_to(fixtures_dir / "options.json")
    (directory / "weights.hdf5").symlink_to(fixtures_dir / "lm_weights.hdf5")
    return directory


@pytest.fixture(scope="session")
def tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny biLM in the released layout (seed 0)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm"), TINY, seed=0)


@pytest.fixture(scope="session")
def other_tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same architecture with other random weights (seed 1)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm_other"), TINY, seed=1)
