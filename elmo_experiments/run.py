"""Explicit assembly: config -> reader -> data -> vocabulary -> model -> trainer -> run dir."""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.config.registry import Spec
from elmo_experiments.contracts import ListsFiles, reader_context
from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.data.fields import target_fields
from elmo_experiments.data.files import (
    provenance,
    warn_if_sample,
)
from elmo_experiments.data.read_report import check_not_empty
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.devices import resolve_device
from elmo_experiments.errors import DataError, RunDirError
from elmo_experiments.experiment import Experiment, validate_experiment
from elmo_experiments.faults import fault_point
from elmo_experiments.metrics.metric import DatasetMetric
from elmo_experiments.modules.embedders.mixes import mix_logs
from elmo_experiments.training.archive import extract_archive, loading_config, write_archive
from elmo_experiments.training.callbacks import Callback
from elmo_experiments.training.distributed import global_settings, sharded
from elmo_experiments.training.evaluation import evaluate
from elmo_experiments.training.run_dir import load_trained, stored_config
from elmo_experiments.training.session import (
    Built,
    Opened,
    SessionRequest,
    Validated,
    read_request,
    run_session,
    set_up,
)
from elmo_experiments.training.trainer import Trainer

logger = logging.getLogger("elmo_experiments")

SPLITS = ("train", "validation", "test")


@dataclass
class Assembled:
    """The built pieces of an experiment."""

    experiment: Experiment
    reader: Any  # the evaluation reader (validation_dataset_reader if configured)
    vocab: Vocabulary
    model: torch.nn.Module
    dataset_metric: DatasetMetric | None  # the experiment's dataset_metric, built


def data_paths(experiment: Experiment) -> dict[str, str | None]:
    return {
        "train": experiment["train_data_path"],
        "validation": experiment["validation_data_path"],
        "test": experiment["test_data_path"],
    }


def subsample(instances: list[dict[str, Any]], fraction: float, seed: int
              ) -> list[dict[str, Any]]:
    """A random ``fraction`` of ``instances`` (at least one), in their original order."""
    if fraction >= 1.0:
        return instances
    count = max(1, round(len(instances) * fraction))
    chosen = sorted(random.Random(seed).sample(range(len(instances)), count))
    return [instances[i] for i in chosen]


def _count(fields: dict[str, Any], instances: list[dict[str, Any]],
           counts: dict[str, Counter[str]]) -> None:
    for instance in instances:
        for name, field in fields.items():
            if instance.get(name) is not None:
                field.count(instance[name], counts)


def build_vocabulary(reader: Any, instances: list[dict[str, Any]], settings: dict[str, Any],
                     evaluation: tuple[tuple[Any, list[dict[str, Any]]], ...] = ()
                     ) -> Vocabulary:
    """Every field counts its vocabulary items (tokens per indexer, labels) over ``instances``;
    with ``labels_from_evaluation_data``, the labels that only the ``(reader, instances)`` pairs
    of ``evaluation`` (the validation and test data) hold come after the training data's, most
    frequent first: a training set that holds every label gets the same vocabulary either way."""
    counts: dict[str, Counter[str]] = {}
    _count(reader.fields, instances, counts)
    vocab = Vocabulary.from_counts(counts, settings["min_count"], settings["max_vocab_size"])
    if settings.get("labels_from_evaluation_data"):
        extra: dict[str, Counter[str]] = {}
        for evaluation_reader, data in evaluation:
            fields = evaluation_reader.fields
            _count({name: fields[name] for name in target_fields(fields)}, data, extra)
        ranked = Vocabulary.from_counts(extra)  # most frequent first, as training's are
        for namespace in ranked.namespaces():
            for label in ranked.tokens(namespace):
                vocab.add(namespace, label)  # a label training holds keeps its id
    return vocab


def build_readers(experiment: Experiment) -> tuple[Any, Any]:
    """The training reader and the evaluation reader (the same object unless configured)."""
    reader = experiment.reader.build()
    evaluation_reader = (reader if experiment.evaluation_reader is experiment.reader
                         else experiment.evaluation_reader.build())
    return reader, evaluation_reader


def read_datasets(experiment: Experiment, reader: Any, evaluation_reader: Any
                  ) -> dict[str, list[dict[str, Any]]]:
    """Every configured split, read; the training data cut to ``train_data_fraction``. A split
    left without instances (every record dropped by its reader) is a one-line error saying how
    many were read and why they were dropped."""
    datasets = {}
    for split, path in data_paths(experiment).items():
        if path:
            split_reader = reader if split == "train" else evaluation_reader
            datasets[split] = split_reader.read(path)
            check_not_empty(split, path, datasets[split], split_reader)
    datasets["train"] = subsample(datasets["train"], experiment["train_data_fraction"],
                                  experiment["train_data_seed"])
    return datasets


def training_vocabulary(experiment: Experiment, reader: Any, evaluation_reader: Any,
                        datasets: dict[str, list[dict[str, Any]]]) -> Vocabulary:
    """The vocabulary a fresh run builds from its data."""
    return build_vocabulary(reader, datasets["train"], experiment["vocabulary"],
                            tuple((evaluation_reader, datasets[split])
                                  for split in ("validation", "test") if split in datasets))


def _build(spec: Spec, reader: Any, vocab: Vocabulary) -> Any:
    context = {"vocab": vocab, **reader_context(reader)}
    return spec.build(**{key: context[key] for key in spec.entry.context})


def build_model(experiment: Experiment, reader: Any, vocab: Vocabulary) -> torch.nn.Module:
    return _build(experiment.model, reader, vocab)


def build_dataset_metric(experiment: Experiment, reader: Any,
                         vocab: Vocabulary) -> DatasetMetric | None:
    spec = experiment["dataset_metric"]
    return _build(spec, reader, vocab) if spec is not None else None


def train(
    config_path: str | Path,
    serialization_dir: str | Path,
    ext_vars: dict[str, str] | None = None,
    overrides: list[str] | None = None,
    force: bool = False,
    recover: bool = False,
    callbacks: list[Callback] | None = None,
) -> dict[str, Any]:
    """Train an experiment; returns (and writes) ``metrics.json``'s contents.

    Everything that can fail on the config or the data (reading, vocabulary, building the model)
    happens before the run directory is touched, so ``--force`` never wipes a run for nothing.
    Launched by ``torchrun``, every process trains its share of each batch (``distributed``).
    The run directory is locked against other writers throughout (``run_lock``); the session
    itself is ``training.session.run_session``'s, with a ``TaskAssembly``.
    """
    def validate(config: dict[str, Any]) -> Validated:
        experiment = validate_experiment(config, source=str(config_path), check_paths=True)
        return Validated(experiment.raw, experiment.values, experiment["trainer"], experiment)

    request, valid = read_request(config_path, serialization_dir, ext_vars, overrides, force,
                                  recover, validate)
    return run_session(request, TaskAssembly(valid.parsed, callbacks or []))


class TaskAssembly:
    """Task training's part of a session: readers, data, vocabulary, model, dataset metric;
    the test evaluation and the model archive at the end."""

    def __init__(self, experiment: Experiment, extra_callbacks: list[Callback]) -> None:
        self.experiment = experiment
        self.extra_callbacks = extra_callbacks

    def assemble(self, request: SessionRequest, seed: int) -> Built:
        experiment, run_dir, world = self.experiment, request.run_dir, request.world
        self.run_dir, self.world = run_dir, world
        paths = data_paths(experiment)
        used_sample = warn_if_sample(paths)
        reader, evaluation_reader = build_readers(experiment)
        # a reader that may read several files for one path (a folder, a split of one) lists
        # them with its optional ``files(path)`` (docs/framework.md)
        readers = {"train": reader, "validation": evaluation_reader, "test": evaluation_reader}
        files_of = {split: r.files for split, r in readers.items() if isinstance(r, ListsFiles)}
        self.data_record = {**provenance(paths, files_of), "embedded_sample": used_sample}
        datasets = read_datasets(experiment, reader, evaluation_reader)
        self.data_record["train_instances"] = len(datasets["train"])
        self.vocab_dir = vocab_dir = run_dir / "vocabulary"
        resuming = request.recover and (run_dir / "config.json").is_file()
        saved = resuming and (vocab_dir / "namespaces.json").is_file()
        resuming, saved = world.broadcast((resuming, saved))  # rank 0's look, before it
        # changes anything
        if resuming and not saved and (run_dir / "last.pt").is_file():
            raise RunDirError(f"{vocab_dir}: missing or incomplete, but last.pt was trained "
                              f"with it; the run cannot resume (start it afresh with --force)")
        vocab = (Vocabulary.load(vocab_dir) if saved
                 else training_vocabulary(experiment, reader, evaluation_reader, datasets))
        self.model = model = build_model(experiment, reader, vocab)
        self.dataset_metric = build_dataset_metric(experiment, evaluation_reader, vocab)
        try:
            limit = experiment["data_loader"]["max_instance_tokens"]
            indexed = {split: index_instances(data, reader.fields, vocab,
                                              source=str(paths[split]),
                                              max_instance_tokens=limit)
                       for split, data in datasets.items()}
        except DataError as error:
            if not saved:
                raise
            raise DataError(f"{vocab_dir}: the run's saved vocabulary does not fit its data "
                            f"(was it changed?): {error}") from None
        settings = global_settings(experiment["data_loader"], world)  # batch sizes are per rank
        self.loaders = {split: sharded(InstanceLoader(data, reader.fields, settings, seed,
                                                      train=split == "train"),
                                       world, split == "train")
                        for split, data in indexed.items()}
        self.train_instances = len(indexed["train"])
        setup = set_up(model, experiment["trainer"], self.dataset_metric, self.extra_callbacks,
                       world)
        if world.main:  # the learned mixes: recorded, logged and plotted each epoch
            setup.callbacks.extend(mix_logs(model, setup.callbacks))
        return Built(setup, lambda: None if saved else vocab.save(vocab_dir))

    def opened(self, recover: bool) -> Opened:
        logger.info("training on %d instances", self.train_instances)
        return Opened(self.loaders["train"], self.loaders.get("validation"),
                      Vocabulary.digest(self.vocab_dir))

    def conclude(self, trainer: Trainer, metrics: dict[str, Any]) -> dict[str, Any]:
        """The test figures (``evaluate_on_test``) and the data's provenance."""
        experiment = self.experiment
        fault_point("run:test_evaluation")
        if experiment["evaluate_on_test"] and "test" in self.loaders:
            test = evaluate(self.model, self.loaders["test"],
                            amp=experiment["trainer"].get("amp"),
                            dataset_metric=self.dataset_metric, world=self.world)
            metrics.update({f"test_{k}": v for k, v in test.items()})
            logger.info("test: %s", json.dumps({k: round(v, 4) for k, v in test.items()
                                                 if isinstance(v, float) and "-" not in k}))
        metrics["data"] = self.data_record
        return metrics

    def finished(self, metrics: dict[str, Any]) -> None:
        """The model archive (rank 0, when there are best weights)."""
        if self.world.main and (self.run_dir / "best.pt").is_file():
            logger.info("archive: %s", write_archive(self.run_dir))


def load_run(run_dir: str | Path, weights: str = "best.pt", device: str = "cpu") -> Assembled:
    """Rebuild a trained model from a run directory or a ``model.tar.gz`` archive (config,
    vocabulary, weights), on ``device`` (cpu, cuda, cuda:N, auto)."""
    run_dir = Path(run_dir)
    if run_dir.is_file():
        run_dir, weights = extract_archive(run_dir), "best.pt"
    config, source = stored_config(run_dir, " nor a model archive")
    experiment = validate_experiment(loading_config(config, run_dir), source=source)
    reader = experiment.evaluation_reader.build()
    vocab = Vocabulary.load(run_dir / "vocabulary")
    model = build_model(experiment, reader, vocab)
    load_trained(model, run_dir, weights, config, Vocabulary.digest(run_dir / "vocabulary"))
    model.eval()
    model.to(resolve_device(device, "--device"))
    return Assembled(experiment, reader, vocab, model,
                     build_dataset_metric(experiment, reader, vocab))
