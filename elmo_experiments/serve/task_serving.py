"""What a task tells the server and the spaCy component about itself: the ``serving`` registry
category. A task folder registers, under the task's name, a ``TaskServing``: the model types
it owns, what one input holds, how a request item becomes the reader's instances, how a
prediction record is completed for display, and (for tasks that read one text) how it reads and
annotates a spaCy ``Doc``. The server and ``spacy_components.py`` dispatch through it and know
no task; a model whose type no task claims is served with the reader's own instance JSON.

The request checks shared by the tasks' parsers (``text``, ``tokens``, ``sentences``,
``pair_part``) and the limits they check against live here too: this module imports no web
framework, model or task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elmo_experiments.contracts import TaskServing
from elmo_experiments.errors import ElmoError

CATEGORY = "serving"


class RequestError(ElmoError):
    """A request the server refuses: ``field`` names what is wrong, ``status`` the HTTP code."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.status = status


@dataclass(frozen=True)
class Limits:
    """What one request may ask for."""

    max_body_bytes: int = 1_000_000
    max_items: int = 64  # texts or instances per request
    max_chars: int = 20_000  # per text
    max_tokens: int = 512  # per token list (and per tokenised sentence for /embed)
    max_token_chars: int = 200  # per token of a token list
    timeout_s: float = 60.0  # a request not answered by then gets 504
    max_queue: int = 16  # requests in flight at once; more get 503 at once
    chunk_instances: int = 8  # instances predicted per turn at a model (a short request
    # waits for one such chunk of a long one, not for all of it)


def servings() -> dict[str, TaskServing]:
    """Every registered task's serving hooks, by task name."""
    from elmo_experiments.config.registry import entries

    return {name: entry.builder() for name, entry in entries(CATEGORY).items()}


def serving_for(model_type: str) -> tuple[str, TaskServing | None]:
    """The task a model type belongs to and its hooks; ``(model_type, None)`` when no task
    claims the type (the model is served with raw instances)."""
    for name, serving in sorted(servings().items()):
        if model_type in serving.model_types:
            return name, serving
    return model_type, None


# ---- the checks of one request item's parts, shared by the tasks' parsers ----

def text(value: Any, field: str, limits: Limits) -> str:
    if not isinstance(value, str):
        raise RequestError(field, f"must be a string, got {type(value).__name__}")
    if len(value) > limits.max_chars:
        raise RequestError(field, f"{len(value)} characters, over the limit of "
                                  f"{limits.max_chars}", 413)
    return value


def tokens(value: Any, field: str, limits: Limits) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise RequestError(field, "must be a list of strings (tokens)")
    if len(value) > limits.max_tokens:
        raise RequestError(field, f"{len(value)} tokens, over the limit of {limits.max_tokens}",
                           413)
    for i, token in enumerate(value):
        if not token or len(token) > limits.max_token_chars or any(c.isspace() for c in token):
            raise RequestError(f"{field}[{i}]", f"{token[:40]!r}: a token is non-empty, without "
                                                f"spaces, at most {limits.max_token_chars} "
                                                f"characters")
    return value


def one_of(item: dict[str, Any], where: str, *keys: str) -> None:
    """A request item gives at most one of ``keys`` (two ways to give one input)."""
    given = [key for key in keys if key in item]
    if len(given) > 1:
        raise RequestError(f"{where}{given[1]}", f"give {' or '.join(keys)}, not both")


def plain_text(value: Any) -> None:
    """Every string of a parsed JSON body (keys too) is Unicode text: JSON's ``\\ud800``
    escapes decode to lone surrogates, which no tokenizer or encoder takes."""
    stack = [value]
    while stack:
        found = stack.pop()
        if isinstance(found, dict):
            stack.extend(found.keys())
            stack.extend(found.values())
        elif isinstance(found, list):
            stack.extend(found)
        elif isinstance(found, str):
            try:
                found.encode("utf-8")
            except UnicodeEncodeError as error:
                raise RequestError("body", f"a string holds a lone surrogate "
                                           f"({found[error.start]!a}), which is not Unicode "
                                           f"text") from None


def sentences(item: dict[str, Any], where: str, limits: Limits) -> list[list[str]]:
    """The tokenised sentences of ``text`` (split as in training) or the one of ``tokens``."""
    from elmo_experiments.data.tokenizers import split_sentences

    one_of(item, where, "text", "tokens")
    if "tokens" in item:
        found = tokens(item["tokens"], f"{where}tokens", limits)
        return [found] if found else []
    if "text" not in item:
        raise RequestError(f"{where}text", "missing (give text or tokens)")
    value = text(item["text"], f"{where}text", limits).strip()
    split = split_sentences(value) if value else []
    for sentence in split:
        if len(sentence) > limits.max_tokens:
            raise RequestError(f"{where}text", f"a sentence of {len(sentence)} tokens, over the "
                                               f"limit of {limits.max_tokens}", 413)
    return split


def pair_part(item: dict[str, Any], name: str, where: str, limits: Limits) -> list[str]:
    """The tokens of ``item[name]``: a token list, or a text tokenised as in training."""
    from elmo_experiments.data.tokenizers import tokenize

    value = item.get(name)
    if isinstance(value, list):
        found = tokens(value, f"{where}{name}", limits)
    else:
        found = tokenize(text(value, f"{where}{name}", limits))
    if not found:
        raise RequestError(f"{where}{name}", "must not be empty")
    if len(found) > limits.max_tokens:
        raise RequestError(f"{where}{name}", f"{len(found)} tokens, over the limit of "
                                             f"{limits.max_tokens}", 413)
    return found


def doc_pieces(doc: Any, by_sentence: bool) -> list[list[int]]:
    """The non-space token indices of each piece of a spaCy ``Doc``: its sentences (with
    ``by_sentence``, where a sentencizer or parser set them) or the whole doc; empty pieces
    dropped."""
    pieces = list(doc.sents) if by_sentence and doc.has_annotation("SENT_START") else [doc[:]]
    kept = [[t.i for t in piece if not t.is_space] for piece in pieces]
    return [indices for indices in kept if indices]
