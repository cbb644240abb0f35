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

from elmo_experiments.analysis.mix_log import mix_logs
from elmo_experiments.config.loader import load_config
from elmo_experiments.config.paths import absolute_paths
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
from elmo_experiments.training.archive import extract_archive, loading_config, write_archive
from elmo_experiments.training.callbacks import Callback
from elmo_experiments.training.distributed import (
    World,
    global_settings,
    sharded,
    stop_on_lost_rank,
    world_from_env,
)
from elmo_experiments.training.evaluation import evaluate
from elmo_experiments.training.run_dir import (
    check_run_dir,
    describe,
    load_checkpoint,
    read_config,
    verify_checkpoint,
)
from elmo_experiments.training.run_identity import identity
from elmo_experiments.training.run_lock import run_dir_lock
from elmo_experiments.training.session import (
    finish,
    fit,
    open_run,
    seed_everything,
    set_up,
    setup_logging,
    summary,
)

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
    The run directory is locked against other writers throughout (``run_lock``).
    """
    world = world_from_env()
    reads: dict[str, str] = {}
    config = absolute_paths(load_config(config_path, ext_vars, overrides, reads))
    experiment = validate_experiment(config, source=str(config_path), check_paths=True)
    run_dir = Path(serialization_dir)
    with stop_on_lost_rank(run_dir):  # another rank gone: one line, not gloo's tracebacks
        check_run_dir(run_dir, force=force, recover=recover)
        world.barrier()  # every rank has looked at the run directory before rank 0 changes it
        setup_logging(None, world)
        what = identity(config_path, overrides, ext_vars, reads, experiment.raw)
        with run_dir_lock(run_dir, world):  # one writer at a time, from here to the end
            return _train(experiment, run_dir, recover, force, str(config_path),
                          callbacks or [], what, world)


def _train(experiment: Experiment, run_dir: Path, recover: bool, force: bool, source: str,
           extra_callbacks: list[Callback], what: dict[str, Any], world: World
           ) -> dict[str, Any]:
    seed = seed_everything(experiment.values)
    paths = data_paths(experiment)
    used_sample = warn_if_sample(paths)
    reader, evaluation_reader = build_readers(experiment)
    # a reader that may read several files for one path (a folder, a split of one) lists them
    # with its optional ``files(path)`` (docs/framework.md)
    readers = {"train": reader, "validation": evaluation_reader, "test": evaluation_reader}
    files_of = {split: r.files for split, r in readers.items() if isinstance(r, ListsFiles)}
    data_record = {**provenance(paths, files_of), "embedded_sample": used_sample}  # as read
    datasets = read_datasets(experiment, reader, evaluation_reader)
    data_record["train_instances"] = len(datasets["train"])
    vocab_dir = run_dir / "vocabulary"
    resuming = recover and (run_dir / "config.json").is_file()
    saved = resuming and (vocab_dir / "namespaces.json").is_file()
    resuming, saved = world.broadcast((resuming, saved))  # rank 0's look, before it changes
    # anything
    if resuming and not saved and (run_dir / "last.pt").is_file():
        raise RunDirError(f"{vocab_dir}: missing or incomplete, but last.pt was trained with "
                          f"it; the run cannot resume (start it afresh with --force)")
    vocab = (Vocabulary.load(vocab_dir) if saved
             else training_vocabulary(experiment, reader, evaluation_reader, datasets))
    model = build_model(experiment, reader, vocab)
    dataset_metric = build_dataset_metric(experiment, evaluation_reader, vocab)
    try:
        limit = experiment["data_loader"]["max_instance_tokens"]
        indexed = {split: index_instances(data, reader.fields, vocab, source=str(paths[split]),
                                          max_instance_tokens=limit)
                   for split, data in datasets.items()}
    except DataError as error:
        if not saved:
            raise
        raise DataError(f"{vocab_dir}: the run's saved vocabulary does not fit its data (was "
                        f"it changed?): {error}") from None
    settings = global_settings(experiment["data_loader"], world)  # batch sizes are per rank
    loaders = {split: sharded(InstanceLoader(data, reader.fields, settings, seed,
                                             train=split == "train"), world, split == "train")
               for split, data in indexed.items()}
    setup = set_up(model, experiment["trainer"], dataset_metric, extra_callbacks, world)
    if world.main:  # the learned mixes: recorded, logged and plotted each epoch
        setup.callbacks.extend(mix_logs(model, setup.callbacks))
    # everything that can fail on the config or the data has been tried: now wipe or create
    recover = open_run(run_dir, force, recover, experiment.raw, source, what,
                       lambda: None if saved else vocab.save(vocab_dir), world)
    description = describe(experiment.raw, Vocabulary.digest(vocab_dir))
    logger.info("training on %d instances", len(indexed["train"]))
    trainer, best = fit(setup, loaders["train"], loaders.get("validation"),
                        experiment["trainer"], run_dir, experiment.raw, recover, description,
                        world)
    metrics = summary(trainer, best)
    fault_point("run:test_evaluation")
    if experiment["evaluate_on_test"] and "test" in loaders:
        test = evaluate(model, loaders["test"], amp=experiment["trainer"].get("amp"),
                        dataset_metric=dataset_metric, world=world)
        metrics.update({f"test_{k}": v for k, v in test.items()})
        logger.info("test: %s", json.dumps({k: round(v, 4) for k, v in test.items()
                                             if isinstance(v, float) and "-" not in k}))
    metrics["data"] = data_record
    metrics = finish(trainer, run_dir, metrics)
    if world.main and (run_dir / "best.pt").is_file():
        logger.info("archive: %s", write_archive(run_dir))
    return metrics


def load_run(run_dir: str | Path, weights: str = "best.pt", device: str = "cpu") -> Assembled:
    """Rebuild a trained model from a run directory or a ``model.tar.gz`` archive (config,
    vocabulary, weights), on ``device`` (cpu, cuda, cuda:N, auto)."""
    run_dir = Path(run_dir)
    if run_dir.is_file():
        run_dir, weights = extract_archive(run_dir), "best.pt"
    config_file = run_dir / "config.json"
    if not config_file.is_file():
        raise RunDirError(f"{run_dir}: not a run directory (no config.json) nor a model "
                          f"archive")
    config = read_config(run_dir)
    experiment = validate_experiment(loading_config(config, run_dir), source=str(config_file))
    reader = experiment.evaluation_reader.build()
    vocab = Vocabulary.load(run_dir / "vocabulary")
    model = build_model(experiment, reader, vocab)
    path = run_dir / weights
    checkpoint = load_checkpoint(path)
    verify_checkpoint(checkpoint, path, "best", model,
                      describe(config, Vocabulary.digest(run_dir / "vocabulary")))
    model.load_state_dict(checkpoint["model"])
    model.eval()
    model.to(resolve_device(device, "--device"))
    return Assembled(experiment, reader, vocab, model,
                     build_dataset_metric(experiment, reader, vocab))
