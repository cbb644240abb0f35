"""Evaluating and applying a trained run: metrics on a data file, predictions as JSON lines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.data.files import iter_lines
from elmo_experiments.data.tag_schemes import convert_tags
from elmo_experiments.errors import DataError
from elmo_experiments.run import Assembled, load_run
from elmo_experiments.training.trainer import evaluate


def evaluate_file(run_dir: str | Path, data_file: str | Path, weights: str = "best.pt",
                  predictions_path: str | None = None,
                  conlleval_path: str | None = None) -> dict[str, Any]:
    """Metrics of the run's model on ``data_file``; optionally write its predictions."""
    run = load_run(run_dir, weights)
    instances = run.reader.read(data_file)
    predictions: list[dict[str, Any]] = []
    loader = _loader(run, instances, str(data_file))
    metrics = evaluate(run.model, loader, predictions)
    if predictions_path:
        with open(predictions_path, "w", encoding="utf-8") as handle:
            for record in predictions:
                handle.write(json.dumps(record) + "\n")
    if conlleval_path:
        scheme = getattr(run.reader, "label_encoding", None)
        with open(conlleval_path, "w", encoding="utf-8") as handle:
            for instance, record in zip(instances, predictions, strict=True):
                gold_tags, guess_tags = instance["tags"], record["tags"]
                if scheme is not None:  # conlleval reads IOB1/BIO, not BIOUL
                    gold_tags = convert_tags(gold_tags, scheme, "IOB1")
                    guess_tags = convert_tags(guess_tags, scheme, "IOB1")
                for token, gold, guess in zip(instance["tokens"], gold_tags, guess_tags,
                                              strict=True):
                    handle.write(f"{token} {gold} {guess}\n")
                handle.write("\n")
    return metrics


def _read_input(path: str, raw_text: bool, reader: Any) -> list[dict[str, Any]]:
    if raw_text:
        from elmo_experiments.data.tokenizers import split_sentences

        if len(reader.fields.text) != 1:
            raise DataError(f"--text gives single sentences, but this model reads "
                            f"{' + '.join(reader.fields.text)}: give a data file instead")
        lines = sys.stdin if path == "-" else (text for _, text in iter_lines(path))
        sentences = [s for line in lines if line.strip() for s in split_sentences(line.strip())]
        return [reader.text_to_instance(tokens) for tokens in sentences]
    return [{**instance, reader.fields.label: None} for instance in reader.read(path)]


def _loader(run: Assembled, instances: list[dict[str, Any]], source: str) -> InstanceLoader:
    fields = run.reader.fields
    data = index_instances(instances, run.reader.token_indexers, run.vocab, fields,
                           source=source)
    return InstanceLoader(data, run.reader.token_indexers, run.experiment["data_loader"],
                          train=False, fields=fields)


def predict_lines(run_dir: str | Path, input_path: str, raw_text: bool = False,
                  weights: str = "best.pt") -> Iterator[dict[str, Any]]:
    """Predictions for every sentence of ``input_path``, in input order."""
    run = load_run(run_dir, weights)
    instances = _read_input(input_path, raw_text, run.reader)
    predictions: list[dict[str, Any]] = []
    loader = _loader(run, instances, input_path)
    evaluate(run.model, loader, predictions)
    yield from predictions
