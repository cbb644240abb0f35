"""Semantic role tags: CoNLL Start-End props columns <-> argument spans <-> BIO tags.

A props column holds one cell per token for one predicate (CoNLL-2005 and CoNLL-2012 alike):
``(A0*`` opens an argument labelled ``A0``, ``*)`` closes the open one, ``(V*)`` is a one-token
argument and ``*`` is neither. A closing may repeat its label (``*A0)``, ``(V*V)``, the older
CoNLL-2004 style); it must then name the open argument. Within one column arguments never
nest or overlap (the CoNLL-2005 README says so, and its files agree), so a second opening
inside an open argument is an error, as are a closing with nothing open and an argument still
open at the column's end (``BracketError``, carrying the token index).

Spans are ``(label, first, last)``, inclusive token indices, ordered by ``first``. Labels are
kept as the data writes them, continuation and reference prefixes included: ``C-A1``,
``R-A0``, ``ARGM-TMP``. BIO tags are ``B-<label>`` / ``I-<label>`` / ``O``. ``bio_to_spans``
reads them as conlleval does: an ``I-X`` that does not follow ``B-X`` or ``I-X`` starts a new
span (so a model's ill-formed output still scores), and a ``B-X`` always starts one.

``brackets -> spans -> BIO -> spans -> brackets`` gives back the column in normal form
(``normalise_brackets``): ``(X*``, ``*``, ``*)``, ``(X*)``, without repeated labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from elmo_experiments.data.tag_schemes import spans_to_tags, tags_to_spans

Span = tuple[str, int, int]  # (label, first token, last token), inclusive

_LABEL = r"[^()*\s]+"
_CELL = re.compile(rf"((?:\({_LABEL})*)\*((?:[^()*\s]*\))*)")
_OPEN = re.compile(rf"\(({_LABEL})")
_CLOSE = re.compile(r"([^()*\s]*)\)")


class BracketError(ValueError):
    """A malformed props column: ``index`` is the token (0-based) where it shows, ``reason``
    says what is wrong (readers add the file, line and predicate)."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"token {index}: {reason}")
        self.index = index
        self.reason = reason


def brackets_to_spans(column: Sequence[str]) -> list[Span]:
    """The arguments of one predicate's Start-End column, in order; ``BracketError`` if the
    column is malformed (a cell that is not Start-End, a closing with nothing open, a
    labelled closing naming another argument, nesting, an argument left open)."""
    spans: list[Span] = []
    label: str | None = None  # the open argument
    start = 0
    for index, cell in enumerate(column):
        match = _CELL.fullmatch(cell)
        if match is None:
            raise BracketError(index, f"{cell!r} is not a Start-End cell ('(LABEL*', '*', "
                                      f"'*)', '(LABEL*)')")
        for opened in _OPEN.findall(match[1]):
            if label is not None:
                raise BracketError(index, f"'({opened}' opens inside argument {label} (open "
                                          f"since token {start}): nested arguments")
            label, start = opened, index
        for closed in _CLOSE.findall(match[2]):
            if label is None:
                raise BracketError(index, f"'{closed})' closes no argument")
            if closed and closed != label:
                raise BracketError(index, f"'{closed})' closes argument {label}")
            spans.append((label, start, index))
            label = None
    if label is not None:
        raise BracketError(start, f"argument {label} is never closed (the column ends at "
                                  f"token {len(column) - 1})")
    return spans


def _checked(spans: Sequence[Span], length: int) -> list[Span]:
    """``spans`` ordered by first token; ``ValueError`` if one is empty, outside
    ``range(length)`` or overlaps another."""
    ordered = sorted(spans, key=lambda span: span[1])
    previous = -1
    for label, first, last in ordered:
        if not label or not 0 <= first <= last < length:
            raise ValueError(f"span {(label, first, last)} is not a labelled span inside "
                             f"{length} tokens")
        if first <= previous:
            raise ValueError(f"span {(label, first, last)} overlaps the span before it")
        previous = last
    return ordered


def spans_to_bio(spans: Sequence[Span], length: int) -> list[str]:
    """BIO tags of ``length`` tokens: ``B-X`` at each span's first token, ``I-X`` after, ``O``
    outside; ``ValueError`` for overlapping or out-of-range spans."""
    return spans_to_tags(_checked(spans, length), length, "BIO")


def bio_to_spans(tags: Sequence[str]) -> list[Span]:
    """The spans of BIO tags (conlleval's reading: a stray ``I-X`` starts a span); the ``V``
    span is one of them. ``ValueError`` for a tag that is not ``O``, ``B-X`` or ``I-X``."""
    return tags_to_spans(list(tags), "BIO")


def spans_to_brackets(spans: Sequence[Span], length: int) -> list[str]:
    """The Start-End column of ``length`` tokens for ``spans``: ``(X*`` ... ``*)``, ``(X*)``
    for a one-token span, ``*`` elsewhere; ``ValueError`` for overlapping spans."""
    cells = ["*"] * length
    for label, first, last in _checked(spans, length):
        if first == last:
            cells[first] = f"({label}*)"
        else:
            cells[first], cells[last] = f"({label}*", "*)"
    return cells


def normalise_brackets(column: Sequence[str]) -> list[str]:
    """``column`` rewritten in normal form (``*A0)`` -> ``*)``, ``(V*V)`` -> ``(V*)``)."""
    return spans_to_brackets(brackets_to_spans(column), len(column))


def bio_problem(tags: Sequence[str]) -> str | None:
    """What makes ``tags`` invalid strict BIO (an ``I-X`` not after ``B-X``/``I-X``, a tag
    that is not ``O``/``B-X``/``I-X``), or None."""
    previous = ""
    for index, tag in enumerate(tags):
        if tag == "O":
            previous = ""
            continue
        prefix, label = tag[:2], tag[2:]
        if prefix not in ("B-", "I-") or not label:
            return f"tag {index} {tag!r} is not O, B-LABEL or I-LABEL"
        if prefix == "I-" and label != previous:
            return f"tag {index} {tag!r} does not continue a {label} span"
        previous = label
    return None
