"""Evaluating and applying a trained run: metrics on a data file, predictions as JSON lines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.data.fields import TextField, target_fields, text_fields
from elmo_experiments.data.files import atomic_write_text, iter_lines, resolve_data_path
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


INPUT_FORMATS = ("data", "text", "jsonl")


def input_format(path: str | None, given: str | None) -> str:
    """How ``path`` is read when ``given`` (``--format``) is not: raw text for ``-`` (standard
    input), else the task's data format (SNLI's data files are JSON lines too: JSON lines of
    inputs are only read when asked for)."""
    if given is not None:
        return given
    return "text" if path == "-" else "data"


def _read_input(path: str | None, fmt: str, run: Assembled, language: str | None = None,
                texts: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The instances to predict: from ``texts`` (raw text given directly), or ``path`` (``-``:
    standard input) read as ``fmt``: ``data`` (the task's data format), ``text`` (raw text, one
    or more sentences a line) or ``jsonl`` (one JSON object a line: ``{"text": ...}``,
    ``{"tokens": [...]}`` or the task's own input fields, as ``elmo-exp serve`` takes them)."""
    reader = run.reader
    if texts or fmt == "text":
        lines = texts if texts else _lines(path)
        return _sentences(lines, reader, language)
    if fmt == "jsonl":
        return _json_instances(_lines(path), path or "-", run)
    if path == "-":
        raise DataError("standard input (-) holds raw text (--format text, its default) or JSON "
                        "lines (--format jsonl), not a data file")
    unlabelled = dict.fromkeys(target_fields(reader.fields))  # predictions, not scores
    return [{**instance, **unlabelled} for instance in reader.read(path)]


def _lines(path: str | None) -> Iterable[str]:
    if path in (None, "-"):
        return (line.rstrip("\n") for line in sys.stdin)
    return (text for _, text in iter_lines(path))


def _sentences(lines: Iterable[str], reader: Any, language: str | None
               ) -> list[dict[str, Any]]:
    from elmo_experiments.data.languages import language_of
    from elmo_experiments.data.tokenizers import split_sentences

    texts = text_fields(reader.fields)
    if len(texts) != 1 or not isinstance(reader.fields[texts[0]], TextField):
        raise DataError(f"raw text gives single sentences, but this model reads "
                        f"{' + '.join(texts)}: give a data file, or JSON lines of its inputs "
                        f"(--format jsonl)")
    code = language_of(reader, language)
    sentences = [s for line in lines if line.strip()
                 for s in split_sentences(line.strip(), code)]
    return [reader.text_to_instance(tokens) for tokens in sentences]


def _json_instances(lines: Iterable[str], source: str, run: Assembled
                    ) -> list[dict[str, Any]]:
    """One JSON object a line, each turned into the reader's instances as the server turns a
    request's item (no size limits: this is the user's own file)."""
    from elmo_experiments.serve.task_serving import Limits, RequestError, serving_for

    _, serving = serving_for(run.experiment.raw["model"]["type"])
    limits = Limits(max_body_bytes=sys.maxsize, max_items=sys.maxsize, max_chars=sys.maxsize,
                    max_tokens=sys.maxsize)
    unlabelled = dict.fromkeys(target_fields(run.reader.fields))
    instances: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        try:
            item = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as error:
            raise DataError(f"{where}: not a JSON object ({error})") from None
        if not isinstance(item, dict):
            raise DataError(f"{where}: must be a JSON object, got {type(item).__name__}")
        try:
            made = serving.instances(item, "", limits, run.reader) if serving else [item]
        except RequestError as error:
            raise DataError(f"{where}: {error}") from None
        instances += [{**instance, **unlabelled} for instance in made]
    return instances


def _loader(run: Assembled, instances: list[dict[str, Any]], source: str) -> InstanceLoader:
    settings = run.experiment["data_loader"]
    data = index_instances(instances, run.reader.fields, run.vocab, source=source,
                           max_instance_tokens=settings["max_instance_tokens"])
    return InstanceLoader(data, run.reader.fields, settings, train=False)


def predict_lines(run_dir: str | Path, input_path: str | None = None,
                  weights: str = "best.pt", device: str = "cpu",
                  official_path: str | None = None, language: str | None = None,
                  texts: tuple[str, ...] = (), input_format_name: str | None = None
                  ) -> Iterator[dict[str, Any]]:
    """Predictions for every sentence of ``input_path`` (``-``: standard input) or of
    ``texts``, in input order; ``input_format_name`` as ``input_format`` takes it. With
    ``official_path`` (a data file only) the predictions are also written there in the dataset
    metric's official format (SQuAD's id -> answer file). ``language``: raw text's (default
    the reader's ``language``, else English)."""
    fmt = "text" if texts else input_format(input_path, input_format_name)
    if not texts and input_path is None:
        raise DataError("nothing to predict: give a data file, - for standard input, or "
                        '--text "a sentence"')
    if texts and input_path is not None:
        raise DataError(f"{input_path}: give either INPUT or --text, not both")
    if not texts and input_path != "-":
        try:
            resolve_data_path(str(input_path))
        except DataError:
            raise DataError(f"{input_path}: no such file (INPUT is a file to predict: the "
                            f"task's data, raw text with --format text, or JSON lines; to "
                            f'predict a sentence, give it as --text "..."; - reads standard '
                            f"input)") from None
    if official_path and fmt != "data":  # before the model loads
        raise ConfigError([f"{fmt} input has no official format (give a data file)"],
                          source=str(run_dir))
    run = load_run(run_dir, weights, device)
    if official_path and run.dataset_metric is None:
        raise ConfigError(["dataset_metric: not set, so this run has no official output "
                           "format to write"], source=str(run_dir))
    source = "--text" if texts else str(input_path)
    predictions = predictions_for(run, _read_input(input_path, fmt, run, language, texts),
                                  source)
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
