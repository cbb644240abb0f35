"""NER's official evaluation: conlleval's input format (``token gold guess``, a blank line after
each sentence, tags in IOB1 or BIO) and the figures conlleval computes from it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.data.files import atomic_write_text
from elmo_experiments.data.tag_schemes import convert_tags
from elmo_experiments.metrics.metric import State, Unit, total
from elmo_experiments.metrics.span_f1 import SpanF1


class Conlleval:
    """conlleval.pl's precision, recall, F1 and tag accuracy over the predictions as written:
    ``conlleval_f1`` etc. (``conlleval_f1-PER`` per type). Tags are written in the data's own
    scheme, or as IOB1 when that is BIOUL (conlleval.pl knows no L/U). Gold tags come in the
    model's ``label_encoding``, predictions in the data's scheme (``data_encoding``)."""

    names = ("conlleval_precision", "conlleval_recall", "conlleval_f1", "conlleval_accuracy")
    primary = "conlleval_f1"
    unit = "sentence"

    def __init__(self, label_encoding: str | None, data_encoding: str | None = None) -> None:
        self.label_encoding = label_encoding
        self.data_encoding = data_encoding or label_encoding
        self.written = "IOB1" if self.data_encoding == "BIOUL" else self.data_encoding

    def _written(self, tags: list[str], scheme: str | None) -> list[str]:
        if scheme is None or self.written is None or scheme == self.written:
            return tags
        return convert_tags(tags, scheme, self.written)

    def sentences(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
                  ) -> Iterator[tuple[list[str], list[str], list[str]]]:
        """(tokens, gold tags, predicted tags) per sentence, in the written scheme."""
        for instance, record in zip(instances, predictions, strict=True):
            yield (instance["tokens"], self._written(instance["tags"], self.label_encoding),
                   self._written(record["tags"], self.data_encoding))

    def units(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
              ) -> list[Unit]:
        """One unit per sentence: its chunk counts (conlleval's state at the sentence's end)."""
        units = []
        for number, (_, gold, guess) in enumerate(self.sentences(instances, predictions)):
            metric = SpanF1(iobes=False)  # IOB1/BIO input: counted exactly as conlleval.pl counts
            metric.update([gold], [guess])
            units.append((f"sentence {number}", metric.state()))
        return units

    def from_state(self, state: State) -> dict[str, float]:
        metric = SpanF1(iobes=False)
        metric.merge(state)
        return {f"conlleval_{key}": value for key, value in metric.compute().items()}

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        return self.from_state(total(self.units(instances, predictions)))

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        lines = []
        for tokens, gold, guess in self.sentences(instances, predictions):
            lines.extend(f"{token} {g} {p}\n" for token, g, p in zip(tokens, gold, guess,
                                                                       strict=True))
            lines.append("\n")
        atomic_write_text(path, "".join(lines))


register("dataset_metric", "conlleval",
         context=("label_encoding", "data_encoding"))(Conlleval)
