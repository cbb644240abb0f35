"""The checks every task model must pass (the habit of AllenNLP's ``ModelTestCase``), for the
core tests and for a plugin's own:

- every trainable parameter gets a non-zero gradient from one batch, dropout off;
- the training objective holds the ELMo mixes' λ·||w||² penalty exactly once (the trainer adds
  its modules' ``penalty()`` terms; the model's own ``loss`` must not);
- a batch predicts exactly what its instances predict one by one (padding changes nothing);
- a trained run, saved and reloaded from its directory, gives the same metrics and predictions.

``check_model(config, tmp_path)`` runs them all on a config: a shipped one's name
(``experiments/<name>.jsonnet``, with its embedded samples) or a path to a plugin's own. ELMo
configs need ``ELMO_WEIGHTS`` set (the core tests use a tiny random biLM). A failed check raises
``AssertionError``; nothing here needs pytest.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from elmo_experiments import components
from elmo_experiments.config.loader import PROJECT_ROOT, load_config
from elmo_experiments.contracts import DatasetReader, TaskModel, human_readable, objective
from elmo_experiments.data.batching import Batch, collate, index_instances
from elmo_experiments.data.fields import text_fields
from elmo_experiments.experiment import validate_experiment
from elmo_experiments.modules.dropout import VariationalDropout
from elmo_experiments.modules.embedders.scalar_mix import ScalarMix
from elmo_experiments.predict import evaluate_file, predict_lines
from elmo_experiments.run import build_model, build_vocabulary, train
from elmo_experiments.training.evaluation import evaluate

components.load()  # an entry point for tests and plugins: every component registered

CONTINUOUS_OUTPUTS = ("logits", "probabilities")  # compared row by row, within 1e-5


def config_path(name: str | Path) -> Path:
    """A shipped config's path from its name, or ``name`` itself when it is a path."""
    if isinstance(name, Path) or str(name).endswith((".jsonnet", ".json")):
        return Path(name)
    return PROJECT_ROOT / "experiments" / f"{name}.jsonnet"


def _close(got: float, want: float, rel: float, abs_: float = 0.0) -> bool:
    return math.isclose(got, want, rel_tol=rel, abs_tol=abs_)


def assemble(name: str | Path, overrides: list[str] | None = None
             ) -> tuple[Any, Any, Any, list[dict]]:
    """Reader, vocabulary, a freshly built model (seed 0) and the training instances."""
    config = load_config(config_path(name), overrides=overrides or [])
    experiment = validate_experiment(config, str(config_path(name)))
    reader = experiment.reader.build()
    instances = reader.read(experiment["train_data_path"])
    vocab = build_vocabulary(reader, instances, experiment["vocabulary"])
    torch.manual_seed(0)
    return reader, vocab, build_model(experiment, reader, vocab), instances


def check_reader(reader: Any, instances: list[dict]) -> None:
    """A dataset reader keeps its contract (``contracts.DatasetReader``): it has ``fields``
    and ``read``, and what it read is instances of those fields."""
    assert isinstance(reader, DatasetReader), f"{type(reader).__name__}: no fields or read()"
    assert instances, f"{type(reader).__name__} read no instances"
    unknown = {key for instance in instances for key in instance} - set(reader.fields)
    assert not unknown, f"{type(reader).__name__}: instances hold {sorted(unknown)}, no fields"


def check_task_model(model: Any) -> None:
    """A task model keeps its contract (``contracts.TaskModel``): a module with its streamed
    ``metrics``."""
    assert isinstance(model, torch.nn.Module), f"{type(model).__name__} is no torch module"
    assert isinstance(model, TaskModel), f"{type(model).__name__} has no metrics list"
    assert all(hasattr(metric, "update") for metric in model.metrics)


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
    objective(model, model(**batch.arguments())).backward()
    missing = [name for name, p in model.named_parameters()
               if p.requires_grad and (p.grad is None or not p.grad.abs().sum() > 0)]
    assert missing == [], f"parameters without a gradient: {missing}"


class _OneBatch:
    """A loader of one batch, for ``evaluate``."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch

    def batches(self, epoch: int) -> Iterator[Batch]:
        return iter([self.batch])

    def num_batches(self, epoch: int) -> int:
        return 1

    def __len__(self) -> int:
        return 1


def learned_mixes(model: torch.nn.Module) -> list[ScalarMix]:
    """The model's scalar mixes with learned weights (the ones a λ·||w||² penalty applies to)."""
    return [m for m in model.modules() if isinstance(m, ScalarMix) and m.mode == "learned"]


def check_penalty_once(model: torch.nn.Module, batch: Batch, l2: float = 100.0) -> int:
    """The objective the trainer trains on and ``evaluate`` reports is the model's loss plus
    the mixes' λ·||w||² exactly once: with λ = ``l2`` and random mix weights, it exceeds the
    objective with λ = 0 by the penalty computed here, and the model's own ``loss`` does not
    move. Dropout off, evaluation mode; returns the number of learned mixes checked."""
    mixes = learned_mixes(without_dropout(model).eval())
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for mix in mixes:
            mix.scalar_parameters.copy_(torch.randn(mix.scalar_parameters.shape,
                                                    generator=generator))

    def figures(weight: float) -> tuple[float, float, float]:
        for mix in mixes:
            mix.l2 = weight
        with torch.no_grad():
            output = model(**batch.arguments())
            trained = objective(model, output).item()
        evaluated = evaluate(model, _OneBatch(batch))["loss"]
        return output["loss"].float().item(), trained, evaluated

    plain_loss, plain, _ = figures(0.0)
    loss, trained, evaluated = figures(l2)
    penalty = sum(l2 * float((mix.scalar_parameters.detach().double() ** 2).sum())
                  for mix in mixes)
    assert _close(loss, plain_loss, 1e-6, 1e-6), \
        f"the model's loss moved with λ ({plain_loss} -> {loss}): it adds a penalty itself"
    assert _close(trained - plain, penalty, 1e-4, 1e-4), \
        f"the objective grew by {trained - plain}, not by the mixes' penalty {penalty}"
    assert _close(evaluated, trained, 1e-5, 1e-5), \
        f"evaluate's loss {evaluated} is not the training objective {trained}"
    return len(mixes)


def _rows(output: dict[str, Any], index: int, length: int | None) -> dict[str, torch.Tensor]:
    rows = {}
    for key in CONTINUOUS_OUTPUTS:
        if key in output:
            row = output[key][index]
            rows[key] = row[:length] if length is not None and row.dim() > 1 else row
    return rows


def _assert_same_record(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal records; floats (also inside a nested dict, e.g. probabilities) within 1e-5, other
    values (a nested dict's strings too) equal."""
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if isinstance(value, dict):
            assert sorted(got[key]) == sorted(value), key
            for inner, number in value.items():
                if isinstance(number, float):
                    assert _close(got[key][inner], number, 0.0, 1e-5), (key, inner)
                else:
                    assert got[key][inner] == number, (key, inner)
        elif isinstance(value, float):
            assert _close(got[key], value, 0.0, 1e-5), key
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
        records = human_readable(model, together, together_batch)
        for index, instance in enumerate(chosen):
            alone_batch = make_batch(reader, vocab, [instance])
            alone = model(**alone_batch.arguments())
            _assert_same_record(human_readable(model, alone, alone_batch)[0], records[index])
            length = len(instance[text])
            for key, row in _rows(alone, 0, length).items():
                torch.testing.assert_close(_rows(together, index, length)[key], row,
                                           atol=1e-5, rtol=1e-5, msg=f"{key} of instance {index}")


def check_train_and_reload(name: str | Path, run_dir: Path, overrides: list[str]) -> None:
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
        assert _close(again[key], value, 1e-6, 1e-9), (key, again[key], value)
    first, second = list(predict_lines(run_dir, test_file)), list(predict_lines(run_dir, test_file))
    assert first and first == second


def check_model(name: str | Path, tmp_path: Path, overrides: list[str] | None = None,
                batch_overrides: list[str] | None = None) -> None:
    """All the checks on a config (``batch_overrides`` apply to the one-by-one check only,
    e.g. to switch off a layer norm whose statistics span the batch)."""
    overrides = list(overrides or [])
    reader, vocab, model, instances = assemble(name, overrides)
    check_reader(reader, instances)
    check_task_model(model)
    check_gradients(model, make_batch(reader, vocab, instances[:8]))
    reader, vocab, model, instances = assemble(name, overrides)
    check_penalty_once(model, make_batch(reader, vocab, instances[:8]))
    reader, vocab, model, instances = assemble(name, [*overrides, *(batch_overrides or [])])
    check_batch_equals_one_by_one(model, reader, vocab, instances)
    check_train_and_reload(name, tmp_path / "run", [*overrides, "trainer.num_epochs=2",
                                                    "trainer.progress_bar=false"])
