"""SNLI served (``elmo-exp serve``): a premise and a hypothesis (texts or token lists) in, one
instance; the record keeps both. A pair of texts is no spaCy ``Doc``: no ``elmo_tagger``."""

from __future__ import annotations

from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.serve.task_serving import Limits, TaskServing, pair_part


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    pair = [pair_part(item, name, where, limits) for name in ("premise", "hypothesis")]
    return [reader.text_to_instance(*pair)]


def enrich(record: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    record.setdefault("premise", instance["premise"])
    record.setdefault("hypothesis", instance["hypothesis"])
    return record


SERVING = TaskServing(model_types=("esim",), inputs="premise and hypothesis",
                      instances=instances, enrich=enrich)


@register("serving", "snli")
def serving() -> TaskServing:
    """SNLI's serving hooks."""
    return SERVING
