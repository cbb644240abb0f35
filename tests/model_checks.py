"""The checks every task model must pass (the habit of AllenNLP's ``ModelTestCase``):

- every trainable parameter gets a non-zero gradient from one batch, dropout off;
- a batch predicts exactly what its instances predict one by one (padding changes nothing);
- a trained run, saved and reloaded from its directory, gives the same metrics and predictions.

``check_model(name, tmp_path)`` runs all three on ``experiments/<name>.jsonnet`` with the
embedded samples; ELMo configs need ``ELMO_WEIGHTS`` set (the tests use a tiny random biLM).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments.config.loader import PROJECT_ROOT, load_config
from elmo_experiments.data.batching import Batch, collate, index_instances
from elmo_experiments.data.fields import text_fields
from elmo_experiments.experiment import validate_experiment
from elmo_experiments.modules.dropout import VariationalDropout
from elmo_experiments.predict import evaluate_file, predict_lines
from elmo_experiments.run import build_model, build_vocabulary, train

CONTINUOUS_OUTPUTS = ("logits", "probabilities")  # compared row by row, within 1e-5


def config_path(name: str) -> Path:
    return PROJECT_ROOT / "experiments" / f"{name}.jsonnet"


def assemble(name: str, overrides: list[str] | None = None) -> tuple[Any, Any, Any, list[dict]]:
    """Reader, vocabulary, a freshly built model (seed 0) and the training instances."""
    config = load_config(config_path(name), overrides=overrides or [])
    experiment = validate_experiment(config, str(config_path(name)))
    reader = experiment.reader.build()
    instances = reader.read(experiment["train_data_path"])
    vocab = build_vocabulary(reader, instances, experiment["vocabulary"])
    torch.manual_seed(0)
    return reader, vocab, build_model(experiment, reader, vocab), instances


def make_batch(reader: Any, vocab: Any, instances: list[dict]) -> Batch:
    return collate(index_instances(instances, reader.fields, vocab), reader.fields)


def without_dropout(model: torch.nn.Module) -> torch.nn.Module:
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout | VariationalDropout):
            module.p = 0.0
    return model


def check_gradients(model: torch.nn.Module, batch: Batch) -> None:
    """Every trainable parameter gets a non-zero gradient (dropout off, training mode)."""
    without_dropout(model).train()
    model.zero_grad()
    model(**batch.arguments())["loss"].backward()
    missing = [name for name, p in model.named_parameters()
               if p.requires_grad and (p.grad is None or not p.grad.abs().sum() > 0)]
    assert missing == [], f"parameters without a gradient: {missing}"


def _rows(output: dict[str, Any], index: int, length: int | None) -> dict[str, torch.Tensor]:
    rows = {}
    for key in CONTINUOUS_OUTPUTS:
        if key in output:
            row = output[key][index]
            rows[key] = row[:length] if length is not None and row.dim() > 1 else row
    return rows


def _assert_same_record(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal records; numbers (also inside a nested dict, e.g. probabilities) within 1e-5."""
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if isinstance(value, dict | float):
            assert got[key] == pytest.approx(value, abs=1e-5), key
        else:
            assert got[key] == value, key


def check_batch_equals_one_by_one(model: torch.nn.Module, reader: Any, vocab: Any,
                                  instances: list[dict]) -> None:
    """Predictions for a batch of instances of different lengths equal each one alone."""
    model.eval()
    text = text_fields(reader.fields)[0]
    chosen = sorted(instances, key=lambda i: len(i[text]))
    chosen = [chosen[0], chosen[len(chosen) // 2], chosen[-1]]  # short, middle, long
    assert len({len(i[text]) for i in chosen}) > 1, "the check needs different lengths"
    with torch.no_grad():
        together_batch = make_batch(reader, vocab, chosen)
        together = model(**together_batch.arguments())
        records = model.human_readable(together, together_batch)
        for index, instance in enumerate(chosen):
            alone_batch = make_batch(reader, vocab, [instance])
            alone = model(**alone_batch.arguments())
            _assert_same_record(model.human_readable(alone, alone_batch)[0], records[index])
            length = len(instance[text])
            for key, row in _rows(alone, 0, length).items():
                torch.testing.assert_close(_rows(together, index, length)[key], row,
                                           atol=1e-5, rtol=1e-5, msg=f"{key} of instance {index}")


def check_train_and_reload(name: str, run_dir: Path, overrides: list[str]) -> None:
    """Train briefly; the saved run reloads to the same test metrics and predictions."""
    metrics = train(config_path(name), run_dir, overrides=overrides)
    config = load_config(config_path(name))
    test_file, prefix = config.get("test_data_path"), "test_"
    if test_file is None:  # SQuAD: no public test set; the best epoch's dev figures instead
        test_file, prefix = config["validation_data_path"], "best_validation_"
    again = evaluate_file(run_dir, test_file)
    tested = {k[len(prefix):]: v for k, v in metrics.items() if k.startswith(prefix)}
    assert tested and set(tested) <= set(again)
    for key, value in tested.items():
        assert again[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key
    first, second = list(predict_lines(run_dir, test_file)), list(predict_lines(run_dir, test_file))
    assert first and first == second


def check_model(name: str, tmp_path: Path, overrides: list[str] | None = None,
                batch_overrides: list[str] | None = None) -> None:
    """All three checks on ``experiments/<name>.jsonnet`` (``batch_overrides`` apply to the
    one-by-one check only, e.g. to switch off a layer norm whose statistics span the batch)."""
    overrides = list(overrides or [])
    reader, vocab, model, instances = assemble(name, overrides)
    check_gradients(model, make_batch(reader, vocab, instances[:8]))
    reader, vocab, model, instances = assemble(name, [*overrides, *(batch_overrides or [])])
    check_batch_equals_one_by_one(model, reader, vocab, instances)
    check_train_and_reload(name, tmp_path / "run", [*overrides, "trainer.num_epochs=2",
                                                    "trainer.progress_bar=false"])
