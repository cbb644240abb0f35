"""SRL served (``elmo-exp serve``) and as a spaCy ``elmo_tagger``: tokens with ``predicates``
(token indices) give one instance per predicate; a text (or tokens alone) one per word of each
sentence, and the frames without arguments are dropped. A record gains its predicate and its
arguments as spans; a ``Doc`` one span group per predicate (``srl_0``, ``srl_1``, ...: the
``V`` span, then the arguments labelled by role)."""

from __future__ import annotations

from typing import Any

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
from elmo_experiments.tasks.srl.tags import bio_to_spans


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    """One instance per predicate: the ``predicates`` given (token indices, with ``tokens``),
    else every word of every sentence (frames without arguments are dropped by ``finish``)."""
    if "predicates" in item:
        one_of(item, where, "text", "tokens")
        if "tokens" not in item:
            raise RequestError(f"{where}predicates", "needs tokens (indices point into them)")
        words = tokens(item["tokens"], f"{where}tokens", limits)
        indices = item["predicates"]
        if not isinstance(indices, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(words)
                for i in indices):
            raise RequestError(f"{where}predicates", f"must be a list of token indices "
                                                     f"(0 to {len(words) - 1})")
        return [reader.text_to_instance(words, i) for i in indices]
    return [reader.text_to_instance(sentence, i)
            for sentence in sentences(item, where, limits)
            for i, word in enumerate(sentence) if any(c.isalpha() for c in word)]


def enrich(record: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    words = record["tokens"]
    try:
        spans = bio_to_spans(record["tags"])
    except ValueError:
        spans = []
    record["predicate"] = words[record["predicate_index"]]
    record["arguments"] = [{"role": role, "start": first, "end": last,
                            "text": " ".join(words[first: last + 1])}
                           for role, first, last in spans if role != "V"]
    return record


def finish(item: dict[str, Any], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every word was tried unless ``predicates`` named them: frames without arguments go."""
    return records if "predicates" in item else [r for r in records if r["arguments"]]


def doc_items(doc: Any) -> list[tuple[dict[str, Any], list[int]]]:
    return [({"tokens": [doc[i].text for i in kept]}, kept)
            for kept in doc_pieces(doc, by_sentence=True)]


def annotate(doc: Any, parts: list[tuple[list[int], list[dict[str, Any]]]]) -> None:
    from spacy.tokens import Span, SpanGroup

    frames = []
    for kept, records in parts:
        for record in records:
            predicate = kept[record["predicate_index"]]
            frames.append([Span(doc, predicate, predicate + 1, label="V")] + [
                Span(doc, kept[a["start"]], kept[a["end"]] + 1, label=a["role"])
                for a in record["arguments"]])
    for k, spans in enumerate(frames):
        doc.spans[f"srl_{k}"] = SpanGroup(doc, name=f"srl_{k}", spans=spans,
                                          attrs={"predicate": spans[0].start})


SERVING = TaskServing(model_types=("srl_tagger",),
                      inputs="text or tokens (+ predicates: token indices)",
                      instances=instances, enrich=enrich, finish=finish,
                      doc_items=doc_items, annotate=annotate)


@register("serving", "srl")
def serving() -> TaskServing:
    """SRL's serving hooks."""
    return SERVING
