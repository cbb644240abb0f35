"""The span, per-token feature and document field kinds, each through a test-only task that
trains a few epochs with the real trainer (``tests/field_tasks.py``); the span task selects on a
dataset-level metric computed from its predictions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import field_tasks
import pytest
import torch

from elmo_experiments.config.loader import load_config
from elmo_experiments.errors import ConfigError
from elmo_experiments.experiment import validate_experiment
from elmo_experiments.predict import evaluate_file, predict_lines
from elmo_experiments.run import build_model, build_vocabulary, train
from elmo_experiments.testing import check_batch_equals_one_by_one, check_gradients, make_batch

WORDS = {"type": "embedding", "embedding_dim": 8}
CHARS = {"type": "character_encoding", "embedding_dim": 4, "num_filters": 6,
         "ngram_filter_sizes": [2], "activation": "relu"}
INDEXERS = {"tokens": {"type": "single_id"},
            "token_characters": {"type": "characters", "min_padding_length": 2}}
TASKS = {  # kind -> (reader, model, validation metric, extra config)
    "spans": ("test_spans", "test_span_picker", "+exact_match",
              {"dataset_metric": {"type": "test_exact_match"}}),
    "features": ("test_features", "test_feature_tagger", "+accuracy", {}),
    "documents": ("test_documents", "test_document_classifier", "+accuracy", {}),
}


def write_config(folder: Path, kind: str, epochs: int = 12,
                 elmo: Path | None = None) -> Path:
    reader, model, metric, extra = TASKS[kind]
    indexers = dict(INDEXERS)
    embedders: dict[str, Any] = {"tokens": WORDS, "token_characters": CHARS}
    if elmo is not None:
        indexers["elmo"] = {"type": "elmo_characters"}
        embedders["elmo"] = {"type": "elmo", "weights": str(elmo), "dropout": 0.0}
    config = {
        "dataset_reader": {"type": reader, "token_indexers": indexers},
        "train_data_path": str(field_tasks.write_data(folder, kind, 64, seed=1)),
        "validation_data_path": str(field_tasks.write_data(folder, kind, 32, seed=2)),
        "test_data_path": str(field_tasks.write_data(folder, kind, 32, seed=3)),
        "evaluate_on_test": True,
        "model": {"type": model, "token_embedders": embedders},
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": epochs, "validation_metric": metric, "progress_bar": False,
                    "optimizer": {"type": "adam", "lr": 0.02}},
        **extra,
    }
    path = folder / f"{kind}.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_the_field_kind_trains_and_reloads(kind: str, tmp_path: Path) -> None:
    metrics = train(write_config(tmp_path, kind), tmp_path / "run")
    records = [json.loads((tmp_path / "run" / f"metrics_epoch_{e}.json").read_text())
               for e in range(1, metrics["epochs_completed"] + 1)]
    losses = [r["training_loss"] for r in records]
    assert losses[-1] < 0.7 * losses[0], losses  # it learns
    metric = TASKS[kind][2][1:]
    best = max(records, key=lambda r: r[f"validation_{metric}"])
    assert metrics["best_epoch"] == best["epoch"]  # selection followed the named metric
    assert metrics[f"best_validation_{metric}"] == best[f"validation_{metric}"]
    test_file = load_config(tmp_path / f"{kind}.json")["test_data_path"]
    again = evaluate_file(tmp_path / "run", test_file)
    assert again[metric] == pytest.approx(metrics[f"test_{metric}"])
    predictions = list(predict_lines(tmp_path / "run", test_file))
    assert len(predictions) == 32


def test_a_dataset_level_metric_scores_the_written_predictions(tmp_path: Path) -> None:
    """exact_match is computed from the predictions, and --official-output writes them."""
    train(write_config(tmp_path, "spans", epochs=3), tmp_path / "run")
    test_file = load_config(tmp_path / "spans.json")["test_data_path"]
    official = tmp_path / "answers.json"
    metrics = evaluate_file(tmp_path / "run", test_file, official_path=str(official))
    predicted = json.loads(official.read_text())
    gold = [json.loads(line)["answer"] for line in Path(test_file).read_text().splitlines()]
    right = sum(p == g for p, g in zip(predicted, gold, strict=True))
    assert metrics["exact_match"] == pytest.approx(100.0 * right / len(gold))
    assert metrics["exact_match"] == pytest.approx(metrics["accuracy"])  # the streamed twin


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_the_shared_model_checks_hold(kind: str, tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """Gradients everywhere and batch == one by one; the document task runs ELMo over
    (batch, sentences, tokens, 50) character ids."""
    path = write_config(tmp_path, kind, elmo=tiny_bilm_dir if kind == "documents" else None)
    experiment = validate_experiment(load_config(path), str(path))
    reader = experiment.reader.build()
    instances = reader.read(experiment["train_data_path"])
    vocab = build_vocabulary(reader, instances, experiment["vocabulary"])
    torch.manual_seed(0)
    model = build_model(experiment, reader, vocab)
    check_gradients(model, make_batch(reader, vocab, instances[:8]))
    check_batch_equals_one_by_one(model, reader, vocab, instances)


def test_official_output_needs_a_dataset_metric(tmp_path: Path) -> None:
    train(write_config(tmp_path, "features", epochs=1), tmp_path / "run")
    test_file = load_config(tmp_path / "features.json")["test_data_path"]
    with pytest.raises(ConfigError, match=r"run: dataset_metric: not set, so this run has no "
                                          r"official output format"):
        evaluate_file(tmp_path / "run", test_file, official_path=str(tmp_path / "out"))
