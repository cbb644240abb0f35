"""Coreference served (``elmo-exp serve``) and as a spaCy ``elmo_tagger``: a text (split into
sentences as in training) or ``sentences`` (token lists) make one document; a record gains the
document's tokens, its sentence starts and each cluster's mentions as text; a ``Doc`` one span
group per cluster (``coref_clusters_1``, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from elmo_experiments.config.registry import register
from elmo_experiments.serve.task_serving import (
    Limits,
    RequestError,
    TaskServing,
    doc_pieces,
    one_of,
    sentences,
    tokens,
)


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    one_of(item, where, "text", "sentences", "tokens")
    if "sentences" in item:
        raw = item["sentences"]
        if not isinstance(raw, list):
            raise RequestError(f"{where}sentences", "must be a list of token lists")
        document = [tokens(s, f"{where}sentences[{i}]", limits) for i, s in enumerate(raw)]
    else:
        document = sentences(item, where, limits)
    return [reader.text_to_instance(document)] if document else []


def enrich(record: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    words = [t for sentence in instance["document"] for t in sentence]
    record["tokens"] = words
    record["sentence_starts"] = list(np.cumsum([0] + [len(s) for s in
                                                      instance["document"]])[:-1].tolist())
    record["mentions"] = [[" ".join(words[s: e + 1]) for s, e in cluster]
                          for cluster in record.get("clusters", [])]
    return record


def doc_items(doc: Any) -> list[tuple[dict[str, Any], list[int]]]:
    """The whole doc as one document: its sentences where they are set, else one."""
    items = []
    for kept in doc_pieces(doc, by_sentence=False):
        if doc.has_annotation("SENT_START"):
            split = [[t.text for t in s if not t.is_space] for s in doc.sents]
            items.append(({"sentences": [s for s in split if s]}, kept))
        else:
            items.append(({"sentences": [[doc[i].text for i in kept]]}, kept))
    return items


def annotate(doc: Any, parts: list[tuple[list[int], list[dict[str, Any]]]]) -> None:
    from spacy.tokens import Span, SpanGroup

    clusters = [[Span(doc, kept[s], kept[e] + 1) for s, e in cluster]
                for kept, records in parts for record in records
                for cluster in record["clusters"]]
    for k, spans in enumerate(clusters, start=1):
        doc.spans[f"coref_clusters_{k}"] = SpanGroup(doc, name=f"coref_clusters_{k}",
                                                     spans=spans)


SERVING = TaskServing(model_types=("coref",), inputs="text or sentences (lists of tokens)",
                      instances=instances, enrich=enrich, doc_items=doc_items,
                      annotate=annotate)


@register("serving", "coref")
def serving() -> TaskServing:
    """Coreference's serving hooks."""
    return SERVING
