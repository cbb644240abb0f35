"""experiments/ner.jsonnet end to end on the embedded sample with a tiny random biLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.run import load_run, train
from elmo_experiments.training.evaluation import evaluate

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "experiments" / "ner.jsonnet"
FAST = ["trainer.num_epochs=2", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=8"]
TWO_MIXES = 'model.token_embedders.elmo.mixes=[{"l2":0.1},{"l2":0.1}]'
ELMO = "embedder.embedders.elmo"


@pytest.fixture(scope="module")
def runs(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One run with ELMo at the input, one with ELMo at the input and the output."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        patch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
        root = tmp_path_factory.mktemp("ner_elmo")
        train(CONFIG, root / "input", overrides=FAST)
        train(CONFIG, root / "both", overrides=[*FAST, TWO_MIXES])
    return {"input": root / "input", "both": root / "both"}


def metrics_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def check_mixes(mixes: list[dict]) -> None:
    for mix in mixes:
        assert len(mix["weights"]) == 3
        assert sum(mix["weights"]) == pytest.approx(1.0, abs=1e-5)
        assert all(0.0 < w < 1.0 for w in mix["weights"])
        assert mix["gamma"] > 0


def test_config_uses_the_tiny_bilm(runs, tiny_bilm_dir: Path) -> None:
    config = json.loads((runs["input"] / "config.json").read_text())
    elmo = config["model"]["token_embedders"]["elmo"]
    assert elmo["weights"] == str(tiny_bilm_dir)
    assert elmo["mixes"] == [{"mode": "learned", "l2": 0.1, "layer_norm": False}]
    assert config["dataset_reader"]["token_indexers"]["elmo"] == {"type": "elmo_characters"}
    assert config["trainer"]["num_epochs"] == 2
    assert config["data_loader"]["batch_size"] == 8


def test_metrics_record_the_learned_mix(runs) -> None:
    metrics = metrics_of(runs["input"])
    assert metrics["epochs_completed"] == 2
    assert metrics["data"]["embedded_sample"] is True
    assert set(metrics["elmo_mixes"]) == {ELMO}
    (mix,) = metrics["elmo_mixes"][ELMO]
    check_mixes([mix])
    assert max(abs(w - 1 / 3) for w in mix["weights"]) > 1e-5  # trained away from the average
    best = json.loads((runs["input"] / f"metrics_epoch_{metrics['best_epoch']}.json").read_text())
    assert best["elmo_mixes"] == metrics["elmo_mixes"]
    assert "test_f1" in metrics and "test_loss" in metrics


def test_two_mixes_put_elmo_at_the_output(runs) -> None:
    metrics = metrics_of(runs["both"])
    mixes = metrics["elmo_mixes"][ELMO]
    assert len(mixes) == 2
    check_mixes(mixes)
    assert mixes[0]["weights"] != mixes[1]["weights"]  # separate (s, γ) per placement
    one = load_run(runs["input"]).model
    two = load_run(runs["both"]).model
    elmo_dim = two.embedder.embedders["elmo"].output_dim
    assert two.tag_projection.in_features == one.tag_projection.in_features + elmo_dim
    assert len(two.embedder.embedders["elmo"].mixes) == 2


@pytest.mark.parametrize("which", ["input", "both"])
def test_load_run_evaluates_to_the_training_test_metrics(runs, which: str) -> None:
    run_dir = runs[which]
    trained = metrics_of(run_dir)
    run = load_run(run_dir)
    assert not run.model.training
    instances = run.reader.read(run.experiment["test_data_path"])
    data = index_instances(instances, run.reader.fields, run.vocab)
    loader = InstanceLoader(data, run.reader.fields, run.experiment["data_loader"], train=False)
    metrics = evaluate(run.model, loader, dataset_metric=run.dataset_metric)
    assert metrics["f1"] == trained["test_f1"]
    assert metrics["accuracy"] == trained["test_accuracy"]
    assert metrics["loss"] == pytest.approx(trained["test_loss"], rel=1e-6)
    reported = {f"test_{k}": v for k, v in metrics.items() if k != "loss"}
    assert reported == {k: v for k, v in trained.items() if k.startswith("test_") and
                        k != "test_loss"}


def test_run_json_records_the_bilm_digest(runs, tiny_bilm_dir: Path) -> None:
    from elmo_experiments.bilm.weights import weights_digest

    record = json.loads((runs["input"] / "run.json").read_text())
    digest = weights_digest(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
    assert record["bilm"] == [{"weights": str(tiny_bilm_dir), "sha1": digest,
                               "options": str((tiny_bilm_dir / "options.json").resolve()),
                               "weight_file": str((tiny_bilm_dir / "weights.hdf5").resolve())}]
    assert record["environment_read"]["ELMO_WEIGHTS"] == str(tiny_bilm_dir)
