"""NER served (``elmo-exp serve``) and as a spaCy ``elmo_tagger``: text or tokens in, one
instance per sentence; in a ``Doc``, the entities set as ``doc.ents`` with their probabilities
(``span._.elmo_score`` and the ``elmo_ents`` span group's ``attrs["scores"]``)."""

from __future__ import annotations

from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.serve.task_serving import Limits, TaskServing, doc_pieces, sentences


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    return [reader.text_to_instance(s) for s in sentences(item, where, limits)]


def doc_items(doc: Any) -> list[tuple[dict[str, Any], list[int]]]:
    return [({"tokens": [doc[i].text for i in kept]}, kept)
            for kept in doc_pieces(doc, by_sentence=True)]


def annotate(doc: Any, parts: list[tuple[list[int], list[dict[str, Any]]]]) -> None:
    from spacy.tokens import Span, SpanGroup

    ents, scores = [], []
    for kept, records in parts:
        for record in records:
            for s in record["spans"]:
                ents.append(Span(doc, kept[s["start"]], kept[s["end"]] + 1, label=s["type"]))
                scores.append(s["score"])
    doc.ents = ents
    for span, score in zip(ents, scores, strict=True):
        span._.elmo_score = score
    doc.spans["elmo_ents"] = SpanGroup(doc, name="elmo_ents", spans=ents,
                                       attrs={"scores": scores})


SERVING = TaskServing(model_types=("crf_tagger",), inputs="text or tokens",
                      instances=instances, doc_items=doc_items, annotate=annotate)


@register("serving", "ner")
def serving() -> TaskServing:
    """NER's serving hooks."""
    return SERVING
