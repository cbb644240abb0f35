"""GAP served (``elmo-exp serve``): a text with a pronoun and two names, each given with its
character offset (``pronoun_offset``, ``a_offset``, ``b_offset``), makes one instance; the
record says which name the pronoun refers to. A pair of candidates is no spaCy annotation: no
``elmo_tagger``."""

from __future__ import annotations

from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.serve.task_serving import Limits, RequestError, TaskServing, text

FIELDS = ("pronoun", "a", "b")


def instances(item: dict[str, Any], where: str, limits: Limits,
              reader: Any) -> list[dict[str, Any]]:
    passage = text(item.get("text"), f"{where}text", limits)
    given: dict[str, Any] = {}
    for name in FIELDS:
        given[name] = text(item.get(name), f"{where}{name}", limits)
        offset = item.get(f"{name}_offset")
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise RequestError(f"{where}{name}_offset", "must be a character offset (an "
                                                        "integer)")
        given[f"{name}_offset"] = offset
    return [reader.text_to_instance(passage, **given)]


SERVING = TaskServing(model_types=("gap_pronoun",),
                      inputs="text, pronoun, a, b and their character offsets "
                             "(pronoun_offset, a_offset, b_offset)",
                      instances=instances, texts=False)


@register("serving", "gap")
def serving() -> TaskServing:
    """GAP's serving hooks."""
    return SERVING
