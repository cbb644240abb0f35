"""SST-5 served (``elmo-exp serve``) and as a spaCy ``elmo_tagger``: text or tokens in, one
instance per sentence; a ``Doc`` (one instance) gets the class probabilities as ``doc.cats``."""

from __future__ import annotations

from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.serve.task_serving import Limits, TaskServing, doc_pieces, sentences


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    return [reader.text_to_instance(s) for s in sentences(item, where, limits)]


def doc_items(doc: Any) -> list[tuple[dict[str, Any], list[int]]]:
    return [({"tokens": [doc[i].text for i in kept]}, kept)
            for kept in doc_pieces(doc, by_sentence=False)]


def annotate(doc: Any, parts: list[tuple[list[int], list[dict[str, Any]]]]) -> None:
    cats = [record["probabilities"] for _, records in parts for record in records]
    if cats:
        doc.cats = {label: float(p) for label, p in cats[0].items()}


SERVING = TaskServing(model_types=("bcn",), inputs="text or tokens", instances=instances,
                      doc_items=doc_items, annotate=annotate)


@register("serving", "sst5")
def serving() -> TaskServing:
    """SST-5's serving hooks."""
    return SERVING
