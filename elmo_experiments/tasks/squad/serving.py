"""SQuAD served (``elmo-exp serve``): a question and a passage in, one instance; the record
gains both token lists (the answer's indices point into the passage's). No ``elmo_tagger``."""

from __future__ import annotations

from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.serve.task_serving import Limits, RequestError, TaskServing, text


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    question = text(item.get("question"), f"{where}question", limits)
    passage = text(item.get("passage"), f"{where}passage", limits)
    if not question.strip() or not passage.strip():
        raise RequestError(f"{where}question" if not question.strip()
                           else f"{where}passage", "must not be empty")
    return [reader.text_to_instance(question, passage)]


def enrich(record: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    record["passage_tokens"] = instance["passage"]
    record["question_tokens"] = instance["question"]
    return record


SERVING = TaskServing(model_types=("bidaf",), inputs="question and passage",
                      instances=instances, enrich=enrich)


@register("serving", "squad")
def serving() -> TaskServing:
    """SQuAD's serving hooks."""
    return SERVING
