"""Every shipped experiment config loads and validates, with the sample data or ELMO_DATA_DIR."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.config.experiment import validate_experiment
from elmo_experiments.config.loader import PROJECT_ROOT, load_config

EXPERIMENTS_DIR = PROJECT_ROOT / "experiments"
SHIPPED = sorted(
    path
    for path in EXPERIMENTS_DIR.rglob("*.jsonnet")
    if "lib" not in path.relative_to(EXPERIMENTS_DIR).parts
)
IDS = [str(path.relative_to(EXPERIMENTS_DIR)) for path in SHIPPED]
DATA_KEYS = ("train_data_path", "validation_data_path", "test_data_path")


def test_there_are_shipped_configs() -> None:
    assert EXPERIMENTS_DIR / "ner_baseline.jsonnet" in SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=IDS)
def test_validates_with_sample_data(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    config = load_config(path)
    experiment = validate_experiment(config, source=str(path), check_paths=True)
    assert experiment.model is not None and experiment.reader is not None
    paths = [experiment[key] for key in DATA_KEYS if experiment[key] is not None]
    assert paths
    for data_path in paths:
        assert Path(data_path).is_relative_to(PROJECT_ROOT / "tasks"), data_path


@pytest.mark.parametrize("path", SHIPPED, ids=IDS)
def test_data_paths_follow_elmo_data_dir(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path))
    config = load_config(path)
    experiment = validate_experiment(config, source=str(path), check_paths=False)
    paths = [experiment[key] for key in DATA_KEYS if experiment[key] is not None]
    assert paths
    for data_path in paths:
        assert Path(data_path).is_relative_to(tmp_path), data_path


@pytest.mark.parametrize("path", SHIPPED, ids=IDS)
def test_overrides_apply_to_shipped_config(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    config = load_config(path, overrides=["trainer.num_epochs=1", '{"random_seed": 7}'])
    experiment = validate_experiment(config, source=str(path))
    assert experiment["trainer"]["num_epochs"] == 1
    assert experiment["random_seed"] == 7
