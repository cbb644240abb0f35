"""Every shipped experiment config loads and validates, with the sample data or ELMO_DATA_DIR."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.config.loader import PROJECT_ROOT, load_config
from elmo_experiments.experiment import validate_experiment

EXPERIMENTS_DIR = PROJECT_ROOT / "experiments"
ALL = sorted(
    path
    for path in EXPERIMENTS_DIR.rglob("*.jsonnet")
    if not {"lib", "ablations"} & set(path.relative_to(EXPERIMENTS_DIR).parts)
)  # ablations/ holds sweep specs, checked by tests/sweeps
BILM = [path for path in ALL if path.parent.name == "bilm"]  # pretraining configs
SHIPPED = [path for path in ALL if path not in BILM]  # task experiments
IDS = [str(path.relative_to(EXPERIMENTS_DIR)) for path in SHIPPED]
BILM_IDS = [str(path.relative_to(EXPERIMENTS_DIR)) for path in BILM]
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
        assert Path(data_path).is_relative_to(PROJECT_ROOT / "reproduction"), data_path


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


@pytest.mark.parametrize("path", SHIPPED, ids=IDS)
def test_builds_against_the_samples(path: Path, tiny_bilm_dir: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Reader, vocabulary and model of every task config, on its sample, one forward pass."""
    from elmo_experiments.data.batching import InstanceLoader, index_instances
    from elmo_experiments.run import build_model, build_vocabulary

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
    experiment = validate_experiment(load_config(path), source=str(path), check_paths=True)
    reader = experiment.reader.build()
    instances = reader.read(experiment["train_data_path"])
    vocab = build_vocabulary(reader, instances, experiment["vocabulary"])
    model = build_model(experiment, reader, vocab)
    data = index_instances(instances[:8], reader.fields, vocab)
    loader = InstanceLoader(data, reader.fields, experiment["data_loader"])
    batch = next(loader.batches(0))
    assert model(**batch.arguments())["loss"].requires_grad


@pytest.mark.parametrize("path", BILM, ids=BILM_IDS)
def test_pretraining_configs_validate(path: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments.bilm.pretraining.run import validate_pretrain

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)

    def validated() -> dict:
        config = load_config(path)
        if "cell_dim" not in config["model"]:  # a continuation: the architecture from --init-from
            from elmo_experiments.bilm.pretrained import resolve_weights
            from elmo_experiments.bilm.pretraining.run import continued_model

            config["model"] = continued_model(config.get("model"),
                                              resolve_weights("gutenberg")[0], str(path))
        return validate_pretrain(config, str(path))

    values = validated()
    # a task's text is only ever its training split, read by its experiment config
    tasks = [s for s in values["corpus"]["train"] if s["format"] == "experiment"]
    assert all(s["split"] == "train" for s in tasks), tasks
    if path.stem.startswith("finetune_"):  # that task's training text alone
        assert values["corpus"]["evaluation"] == []
        for source in values["corpus"]["train"]:
            assert source in tasks, source
            assert Path(source["path"]) == PROJECT_ROOT / "experiments" / (
                path.stem.removeprefix("finetune_") + ".jsonnet")
        return
    files = [s for s in [*values["corpus"]["train"], *values["corpus"]["evaluation"]]
             if s not in tasks]
    for source in files:
        assert Path(source["path"]).is_relative_to(PROJECT_ROOT / "reproduction"), source
    if not path.stem.startswith("tiny"):  # the tiny configs always read their samples
        monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path))
        values = validated()
        train = [s for s in values["corpus"]["train"] if s["format"] != "experiment"]
        assert all(Path(s["path"]).is_relative_to(tmp_path) for s in train)
