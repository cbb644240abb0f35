"""Evaluating and applying a trained run: metrics on a data file, predictions as JSON lines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.data.fields import TextField, target_fields, text_fields
from elmo_experiments.data.files import atomic_write_text, iter_lines
from elmo_experiments.data.read_report import check_not_empty
from elmo_experiments.errors import ConfigError, DataError
from elmo_experiments.run import Assembled, load_run
from elmo_experiments.training.evaluation import evaluate


def evaluate_file(run_dir: str | Path, data_file: str | Path, weights: str = "best.pt",
                  predictions_path: str | None = None,
                  official_path: str | None = None, device: str = "cpu") -> dict[str, Any]:
    """Metrics of the run's model (a run directory or an archive) on ``data_file`` (its
    dataset_metric's too); optionally write its predictions as JSON lines and in the official
    scorer's format."""
    run = load_run(run_dir, weights, device)
    if official_path and run.dataset_metric is None:
        raise ConfigError(["dataset_metric: not set, so this run has no official output "
                           "format to write"], source=str(run_dir))
    instances, predictions, metrics = evaluation_pass(run, data_file)
    if predictions_path:
        atomic_write_text(predictions_path, "".join(json.dumps(r) + "\n" for r in predictions))
    if official_path and run.dataset_metric is not None:
        run.dataset_metric.write(instances, predictions, official_path)
    return metrics


def evaluation_pass(run: Assembled, data_file: str | Path
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The run's instances of ``data_file``, its predictions for them (input order) and its
    metrics on them (its dataset_metric's too)."""
    instances = run.reader.read(data_file)
    check_not_empty("evaluation", str(data_file), instances, run.reader)
    predictions: list[dict[str, Any]] = []
    loader = _loader(run, instances, str(data_file))
    metrics = evaluate(run.model, loader, predictions, dataset_metric=run.dataset_metric)
    return instances, predictions, metrics


def _read_input(path: str, raw_text: bool, reader: Any, language: str | None = None
                ) -> list[dict[str, Any]]:
    if raw_text:
        from elmo_experiments.data.languages import language_of
        from elmo_experiments.data.tokenizers import split_sentences

        texts = text_fields(reader.fields)
        if len(texts) != 1 or not isinstance(reader.fields[texts[0]], TextField):
            raise DataError(f"--text gives single sentences, but this model reads "
                            f"{' + '.join(texts)}: give a data file instead")
        lines = sys.stdin if path == "-" else (text for _, text in iter_lines(path))
        code = language_of(reader, language)
        sentences = [s for line in lines if line.strip()
                     for s in split_sentences(line.strip(), code)]
        return [reader.text_to_instance(tokens) for tokens in sentences]
    unlabelled = dict.fromkeys(target_fields(reader.fields))  # predictions, not scores
    return [{**instance, **unlabelled} for instance in reader.read(path)]


def _loader(run: Assembled, instances: list[dict[str, Any]], source: str) -> InstanceLoader:
    settings = run.experiment["data_loader"]
    data = index_instances(instances, run.reader.fields, run.vocab, source=source,
                           max_instance_tokens=settings["max_instance_tokens"])
    return InstanceLoader(data, run.reader.fields, settings, train=False)


def predict_lines(run_dir: str | Path, input_path: str, raw_text: bool = False,
                  weights: str = "best.pt", device: str = "cpu",
                  official_path: str | None = None, language: str | None = None
                  ) -> Iterator[dict[str, Any]]:
    """Predictions for every sentence of ``input_path``, in input order; with
    ``official_path`` (a data file, not ``raw_text``) also written there in the dataset
    metric's official format (SQuAD's id -> answer file). ``language``: raw text's (default
    the reader's ``language``, else English)."""
    run = load_run(run_dir, weights, device)
    if official_path and (run.dataset_metric is None or raw_text):
        why = "--text input has no official format" if raw_text else (
            "dataset_metric: not set, so this run has no official output format to write")
        raise ConfigError([why], source=str(run_dir))
    predictions = predictions_for(run, _read_input(input_path, raw_text, run.reader, language),
                                  input_path)
    if official_path and run.dataset_metric is not None:
        run.dataset_metric.write(run.reader.read(input_path), predictions, official_path)
    yield from predictions


def predictions_for(run: Assembled, instances: list[dict[str, Any]],
                    source: str) -> list[dict[str, Any]]:
    """The model's prediction record for each instance, in order."""
    predictions: list[dict[str, Any]] = []
    if instances:
        evaluate(run.model, _loader(run, instances, source), predictions)
    return predictions
