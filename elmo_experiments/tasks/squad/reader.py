"""SQuAD v1.1 JSON (``.json`` or ``.json.gz``): questions on Wikipedia paragraphs, each answered
by a span of its paragraph.

One instance per question::

    {"question": [str], "passage": [str],         # tokens
     "answer": (start, end),                      # inclusive token span; absent if not located
     "id": str, "title": str, "passage_text": str,
     "offsets": [(start_char, end_char)],         # per passage token, end exclusive
     "answers": [str]}                            # every gold answer text, in file order

``passage_text[offsets[s][0]:offsets[e][1]]`` is the text of the token span ``(s, e)``. The
passage tokens and offsets of one paragraph are one list shared by its questions: read them,
never change them.
"""

from __future__ import annotations

import json
import logging
import sys
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from elmo_experiments.config.registry import AT_LEAST_ONE, Bounds, Check, TokenIndexers, register
from elmo_experiments.data.fields import MetadataField, SpanField, TextField
from elmo_experiments.data.files import load_data_json, resolve_data_path
from elmo_experiments.data.languages import DEFAULT_LANGUAGE, language_problem
from elmo_experiments.data.read_report import ReadReport
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.data.tokenizers import tokenize_with_offsets
from elmo_experiments.errors import DataError

logger = logging.getLogger("elmo_experiments")

# Characters split off inside spaCy tokens: where SQuAD answers often begin or end mid-token
# (1854–1855, mid-2015, US$100, 1830.[n, Sekulić.:32). Chosen on the train and dev files:
# reproduction/squad/README.md has the numbers. Not the apostrophes: they would break n't and 's.
SPLIT_CHARACTERS = '-–—/~"“”[]():$'

Offsets = list[tuple[int, int]]
Limit = Annotated[int | None, Bounds(*AT_LEAST_ONE)]  # a count, at least 1; null: no limit


def locate(context: str, text: str, answer_start: int) -> tuple[tuple[int, int] | None, bool]:
    """The answer's characters ``[start, end)`` in ``context`` (surrounding whitespace of
    ``text`` left out), and whether they had to be searched for: when ``answer_start`` does
    not point at ``text``, the occurrence of ``text`` nearest to it. None: not in the context."""
    stripped = text.strip()
    if not stripped:
        return None, False
    lead = len(text) - len(text.lstrip())
    if answer_start >= 0 and context[answer_start:answer_start + len(text)] == text:
        return (answer_start + lead, answer_start + lead + len(stripped)), False
    best, at = None, context.find(stripped)
    while at >= 0:
        if best is None or abs(at - lead - answer_start) < abs(best - lead - answer_start):
            best = at
        at = context.find(stripped, at + 1)
    return ((best, best + len(stripped)) if best is not None else None), True


def token_span(offsets: Offsets, start: int, end: int) -> tuple[tuple[int, int] | None, bool]:
    """The inclusive token span covering the characters ``[start, end)`` (the first token
    that overlaps ``start``, the last that overlaps ``end - 1``), and whether its token
    boundaries are exactly ``start`` and ``end``. None: no token overlaps."""
    return Paragraph("", [], offsets).span(start, end)


@dataclass
class Paragraph:
    """A context, its tokens and their character offsets (the whole passage), and what its
    questions' instances get: the first ``limit`` of them (all, without a limit), one pair of
    lists shared by all its questions."""

    context: str
    tokens: list[str]
    offsets: Offsets
    limit: int | None = None
    starts: list[int] = field(init=False)
    ends: list[int] = field(init=False)
    passage: tuple[list[str], Offsets] = field(init=False)

    def __post_init__(self) -> None:
        self.starts = [start for start, _ in self.offsets]
        self.ends = [end for _, end in self.offsets]
        self.passage = ((self.tokens, self.offsets) if self.limit is None
                        else (self.tokens[:self.limit], self.offsets[:self.limit]))

    def span(self, start: int, end: int) -> tuple[tuple[int, int] | None, bool]:
        """``token_span`` on this paragraph's offsets."""
        first = bisect_right(self.ends, start)
        last = bisect_left(self.starts, end) - 1
        if first > last:
            return None, False
        return (first, last), self.starts[first] == start and self.ends[last] == end


class SquadReader:
    """SQuAD v1.1 questions, one instance each (format: the module docstring).

    ``passage_length_limit`` / ``question_length_limit`` (training only; give the evaluation
    reader none): passages and questions are cut to that many tokens, and a question that
    then has no answer inside its passage, or whose answer cannot be located at all, is
    dropped. Without limits every question becomes an instance, located answer or not, as
    the official evaluation scores every question. ``split_characters``: characters that
    become tokens of their own inside spaCy tokens (``tokenize_with_offsets``).
    ``max_articles``: only the file's first articles (a small training set for CPU-sized runs).

    ``alignment``: the counts of the last ``read`` (questions, answers, exact, inexact,
    not_found, searched, dropped, instances); ``read_report``: its questions and why those
    dropped were (``read_report.py``).
    """

    def __init__(
        self,
        token_indexers: TokenIndexers,
        passage_length_limit: Limit = None,  # training only: passage tokens kept
        question_length_limit: Limit = None,  # training only: question tokens kept
        split_characters: str = SPLIT_CHARACTERS,
        max_articles: Limit = None,  # read only the file's first articles
        language: Annotated[str, Check(language_problem)] = DEFAULT_LANGUAGE,
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()}
        self.passage_length_limit = passage_length_limit
        self.question_length_limit = question_length_limit
        self.split_characters = split_characters
        self.max_articles = max_articles
        self.language = language  # spaCy's rules for the passages and questions
        self.fields = {"question": TextField(self.token_indexers),
                       "passage": TextField(self.token_indexers),
                       "answer": SpanField("passage", target=True),
                       "id": MetadataField(), "passage_text": MetadataField(),
                       "offsets": MetadataField(), "answers": MetadataField(),
                       "title": MetadataField()}
        self.alignment: dict[str, int] = {}
        self.read_report = ReadReport("questions")

    @property
    def truncating(self) -> bool:
        """Whether this is a training reader (a length limit is set)."""
        return self.passage_length_limit is not None or self.question_length_limit is not None

    def _tokens(self, text: str) -> tuple[list[str], Offsets]:
        """Tokens and their offsets; equal tokens and equal offsets share one object (all of
        SQuAD's train passages: ~2.6M tokens, so this saves ~100 MB)."""
        tokens, offsets = [], []
        positions = _positions()
        last = len(positions)
        for token, start, end in tokenize_with_offsets(text, self.split_characters,
                                                       self.language):
            tokens.append(sys.intern(token))
            offsets.append((positions[start] if start < last else start,
                            positions[end] if end < last else end))
        return tokens, offsets

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        resolved = resolve_data_path(path)
        data = _field(load_data_json(resolved), "data", list, str(resolved))
        counts = dict.fromkeys(("questions", "answers", "exact", "inexact", "not_found",
                                "searched", "dropped", "instances"), 0)
        instances: list[dict[str, Any]] = []
        report = self.read_report = ReadReport("questions")
        seen: set[str] = set()
        for number, article in enumerate(data[:self.max_articles], start=1):
            where = f"{resolved}: article {number}"
            if not isinstance(article, dict):
                raise DataError(f"{where}: not a JSON object")
            title = article.get("title", "")
            if not isinstance(title, str):
                raise DataError(f"{where}: 'title' is not text")
            where += f" ({json.dumps(title, ensure_ascii=False)})" if title else ""
            for place, paragraph in enumerate(
                    _field(article, "paragraphs", list, where), start=1):
                here = f"{where}, paragraph {place}"
                if not isinstance(paragraph, dict):
                    raise DataError(f"{here}: not a JSON object")
                context = _field(paragraph, "context", str, here)
                questions = _field(paragraph, "qas", list, here)
                whole = Paragraph(context, *self._tokens(context), self.passage_length_limit)
                if not whole.tokens:
                    raise DataError(f"{here}: 'context' is empty")
                for index, question in enumerate(questions, start=1):
                    instance, located = self._question(
                        question, f"{here}, question {index}", whole, title, counts,
                        str(resolved))
                    if instance["id"] in seen:
                        raise DataError(f"{resolved}: question {instance['id']}: the id is "
                                        f"repeated")
                    seen.add(instance["id"])
                    if self.truncating and "answer" not in instance:
                        counts["dropped"] += 1
                        report.drop(f"with no answer inside the first "
                                    f"{self.passage_length_limit} passage tokens"
                                    if located and self.passage_length_limit is not None
                                    else "whose answers are not found in the passage")
                        continue
                    instances.append(instance)
        if not counts["questions"]:
            raise DataError(f"{resolved}: no questions found")
        counts["instances"] = len(instances)
        report.read = counts["questions"]
        self.alignment = counts
        logger.info("%s", _summary(resolved.name, counts, self.passage_length_limit,
                                   self.truncating))
        return instances

    def _question(self, question: Any, where: str, paragraph: Paragraph, title: str,
                  counts: dict[str, int], file: str) -> tuple[dict[str, Any], bool]:
        """One question's instance, and whether any of its answers was located in the whole
        passage; ``counts`` updated with its answers' alignment (on the whole passage). Its
        ``answer``: the span of the first answer located (inside the truncated passage, with
        ``passage_length_limit``)."""
        if not isinstance(question, dict):
            raise DataError(f"{where}: not a JSON object")
        qid = _field(question, "id", str, where)
        where = f"{file}: question {qid}"
        text = _field(question, "question", str, where)
        answers = _field(question, "answers", list, where)
        if not answers:
            raise DataError(f"{where}: 'answers' is empty (SQuAD v2.0's unanswerable "
                            f"questions are not read)")
        tokens, _ = self._tokens(text)
        if not tokens:
            raise DataError(f"{where}: 'question' is empty")
        counts["questions"] += 1
        passage, offsets = paragraph.passage
        instance: dict[str, Any] = {
            "question": tokens[:self.question_length_limit], "passage": passage, "id": qid,
            "passage_text": paragraph.context, "offsets": offsets, "answers": [],
            "title": title}
        located = False
        for number, answer in enumerate(answers, start=1):
            here = f"{where}: answer {number}"
            if not isinstance(answer, dict):
                raise DataError(f"{here}: not a JSON object")
            answer_text = _field(answer, "text", str, here)
            start = _field(answer, "answer_start", int, here)
            instance["answers"].append(answer_text)
            counts["answers"] += 1
            characters, searched = locate(paragraph.context, answer_text, start)
            span, exact = paragraph.span(*characters) if characters else (None, False)
            located = located or span is not None
            if span is None:
                counts["not_found"] += 1
                continue
            counts["searched"] += searched
            counts["exact" if exact else "inexact"] += 1
            if "answer" not in instance and span[1] < len(passage):
                instance["answer"] = span
        return instance, located

    def text_to_instance(self, question: str, passage: str, title: str = "",
                         id: str | None = None) -> dict[str, Any]:
        """An instance without gold answers, from raw question and passage text."""
        tokens, _ = self._tokens(question)
        passage_tokens, offsets = self._tokens(passage)
        return {"question": tokens, "passage": passage_tokens, "id": id,
                "passage_text": passage, "offsets": offsets, "answers": [], "title": title}


@lru_cache(maxsize=1)
def _positions() -> tuple[int, ...]:
    """Shared int objects for character positions (Python makes a new one per int over 256)."""
    return tuple(range(1 << 16))


def _field(record: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """``record[key]``, which must be a ``kind``; else a one-line ``DataError``."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: not a JSON object")
    value = record.get(key)
    if value is None:
        raise DataError(f"{where}: {key!r} is missing")
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        what = {str: "text", int: "an integer", list: "a list"}[kind]
        raise DataError(f"{where}: {key!r} is not {what} (found {type(value).__name__})")
    return value


def _summary(name: str, counts: dict[str, int], limit: int | None, truncating: bool) -> str:
    """The one log line of a read."""
    line = (f"{name}: {counts['questions']:,} questions, {counts['answers']:,} answers; "
            f"{counts['exact']:,} aligned exactly, {counts['inexact']:,} inexactly, "
            f"{counts['not_found']:,} not found")
    if counts["searched"]:
        line += f" ({counts['searched']:,} located by searching for the text)"
    if truncating:
        where = f"inside the first {limit} passage tokens" if limit is not None else "located"
        line += f"; {counts['dropped']:,} questions dropped (no answer {where})"
    return line


register("dataset_reader", "squad")(SquadReader)
