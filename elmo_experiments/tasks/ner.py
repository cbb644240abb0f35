"""NER's official evaluation: conlleval's input format (``token gold guess``, a blank line after
each sentence, tags in IOB1 or BIO) and the figures conlleval computes from it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.data.tag_schemes import convert_tags
from elmo_experiments.metrics.span_f1 import SpanF1


class Conlleval:
    """conlleval.pl's precision, recall, F1 and tag accuracy over the predictions as written:
    ``conlleval_f1`` etc. (``conlleval_f1-PER`` per type). BIOUL tags are written (and scored)
    as IOB1, since conlleval.pl knows no L/U; other schemes as they are."""

    names = ("conlleval_precision", "conlleval_recall", "conlleval_f1", "conlleval_accuracy")

    def __init__(self, label_encoding: str | None) -> None:
        self.label_encoding = label_encoding

    def sentences(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
                  ) -> Iterator[tuple[list[str], list[str], list[str]]]:
        """(tokens, gold tags, predicted tags) per sentence, in the written scheme."""
        for instance, record in zip(instances, predictions, strict=True):
            gold, guess = instance["tags"], record["tags"]
            if self.label_encoding == "BIOUL":
                gold = convert_tags(gold, "BIOUL", "IOB1")
                guess = convert_tags(guess, "BIOUL", "IOB1")
            yield instance["tokens"], gold, guess

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        metric = SpanF1(iobes=False)  # IOB1/BIO input: counted exactly as conlleval.pl counts
        for _, gold, guess in self.sentences(instances, predictions):
            metric.update([gold], [guess])
        return {f"conlleval_{key}": value for key, value in metric.compute().items()}

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            for tokens, gold, guess in self.sentences(instances, predictions):
                for token, g, p in zip(tokens, gold, guess, strict=True):
                    handle.write(f"{token} {g} {p}\n")
                handle.write("\n")


register("dataset_metric", "conlleval", params=[], context=("label_encoding",))(Conlleval)
