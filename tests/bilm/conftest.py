"""Shared pieces of the biLM tests: the reference fixtures (outside the repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("ELMO_FIXTURES_DIR", REPO / "no-fixtures"))


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


