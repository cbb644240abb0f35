"""The experiment schema (the top level of a task config: reader, data, model, loader,
trainer, seeds) and its validation; it ties the config machinery to data and training."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elmo_experiments.config.registry import Param, Spec
from elmo_experiments.config.validate import Validator
from elmo_experiments.data.batching import DATA_LOADER_PARAMS
from elmo_experiments.data.files import data_path_problem
from elmo_experiments.errors import ConfigError
from elmo_experiments.training.trainer import TRAINER_PARAMS

VOCABULARY_PARAMS = (
    Param("min_count", dict, {}, doc="namespace -> minimum count"),
    Param("max_vocab_size", dict, {}, doc="namespace -> maximum size"),
    Param("labels_from_evaluation_data", bool, False,
          doc="add the labels that only the validation and test data hold, after training's "
          "(tokens still come from training only): such a label is a class the model never "
          "predicts instead of an error, and a training set that holds every label keeps its "
          "vocabulary"),
)

EXPERIMENT_PARAMS = (
    Param("dataset_reader", component="dataset_reader"),
    Param("validation_dataset_reader", component="dataset_reader", default=None,
          doc="reads the validation and test data (e.g. SST: roots only); default the same"),
    Param("train_data_path", str),
    Param("validation_data_path", str, None),
    Param("test_data_path", str, None),
    Param("train_data_fraction", float, 1.0, bounds=(1e-9, 1.0),
          doc="train on this share of the training instances (a sample-efficiency curve)"),
    Param("train_data_seed", int, 0, doc="which instances that share is: the same for every "
          "random_seed, so seeds differ only in training"),
    Param("evaluate_on_test", bool, False),
    Param("vocabulary", fields=VOCABULARY_PARAMS, default={}),
    Param("model", component="model"),
    Param("dataset_metric", component="dataset_metric", default=None,
          doc="scores each validation/test pass as a whole, in the task's official format"),
    Param("data_loader", fields=DATA_LOADER_PARAMS, default={}),
    Param("trainer", fields=TRAINER_PARAMS),
    Param("random_seed", int, 13370),
    Param("numpy_seed", int, None),
    Param("pytorch_seed", int, None),
)


@dataclass
class Experiment:
    """A validated config: nested components as ``Spec``s, plain sections as dicts."""

    reader: Spec
    evaluation_reader: Spec  # validation_dataset_reader, or the training reader
    model: Spec
    values: dict[str, Any]
    raw: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def validate_experiment(
    config: dict[str, Any], source: str = "config", check_paths: bool = False,
    check_files: bool = True,
) -> Experiment:
    """Check the whole config against the registry; raise one ``ConfigError`` listing all.

    With ``check_paths`` the data files must exist too (they are not read); without
    ``check_files``, the files the model reads (word vectors, biLM weights) need not.
    """
    validator = Validator(check_files)
    values = validator.fields(config, EXPERIMENT_PARAMS, "")
    trainer = values.get("trainer") or {}
    metric = trainer.get("validation_metric")
    if isinstance(metric, str) and (len(metric) < 2 or metric[0] not in "+-"):
        validator.problems.append(
            f"trainer.validation_metric: {metric!r} must start with + (maximise) or - (minimise)"
        )
    if values.get("evaluate_on_test") and not values.get("test_data_path"):
        validator.problems.append("evaluate_on_test: true but test_data_path is not set")
    if check_paths:
        for key in ("train_data_path", "validation_data_path", "test_data_path"):
            path = values.get(key)
            if isinstance(path, str):
                problem = data_path_problem(path)
                if problem is not None:
                    validator.problems.append(f"{key}: {problem}")
    reader, model = values.get("dataset_reader"), values.get("model")
    evaluation_reader = values.get("validation_dataset_reader") or reader
    if isinstance(reader, Spec) and isinstance(model, Spec):
        _check_indexers(reader, model, validator.problems)
    if isinstance(reader, Spec) and isinstance(evaluation_reader, Spec) and \
            evaluation_reader is not reader:
        if evaluation_reader.entry.name != reader.entry.name:
            validator.problems.append(
                f"validation_dataset_reader.type: {evaluation_reader.entry.name!r} differs from "
                f"dataset_reader.type {reader.entry.name!r}; both must read the same kind of data")
        elif evaluation_reader.raw.get("token_indexers") != reader.raw.get("token_indexers"):
            validator.problems.append(
                "validation_dataset_reader.token_indexers: must equal dataset_reader's (the "
                "model indexes every split the same way)")
    if validator.problems:
        raise ConfigError(validator.problems, source=source)
    assert isinstance(reader, Spec) and isinstance(model, Spec)
    assert isinstance(evaluation_reader, Spec)
    return Experiment(reader=reader, evaluation_reader=evaluation_reader, model=model,
                      values=values, raw=config)


def _check_indexers(reader: Spec, model: Spec, problems: list[str]) -> None:
    """Every token embedder needs the reader's indexer of the same key."""
    indexers = reader.params.get("token_indexers") or {}
    embedders = model.params.get("token_embedders")
    if isinstance(embedders, dict):
        for name in embedders:
            if name not in indexers:
                problems.append(
                    f"model.token_embedders.{name}: no dataset_reader.token_indexers.{name} "
                    f"feeds it (indexers: {', '.join(sorted(indexers)) or 'none'})"
                )
