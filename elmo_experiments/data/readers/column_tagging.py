"""Tagging data in columns: one token per line, a blank line between sentences.

Covers 2-column ``token tag`` files (tab or space separated), CoNLL-2003 and CoNLL-U: the
token and tag columns, the separator, comment lines, document markers and CoNLL-U's multiword
and empty-node lines are settings. Chunk tags are checked against the file's ``tag_scheme`` and
converted to the ``coding_scheme`` the model trains on; plain labels (POS) are read as they are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from elmo_experiments.config.registry import Bounds, Check, Param, Size, TokenIndexers, register
from elmo_experiments.data.fields import SequenceLabelField, TextField
from elmo_experiments.data.files import iter_lines, resolve_data_path
from elmo_experiments.data.languages import DEFAULT_LANGUAGE, LANGUAGE_PARAM
from elmo_experiments.data.tag_schemes import SCHEMES, convert_tags, tags_to_spans
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.errors import ConfigValueError, DataError

DOCUMENT_MARKER = "-DOCSTART-"
MAX_LINE_BYTES = 10_000
_TOKEN_ID = re.compile(r"[0-9]+")  # a CoNLL-U word id; not "3-4" (multiword) or "5.1" (empty)
_SKIPPED_ID = re.compile(r"[0-9]+(-[0-9]+|\.[0-9]+)")  # CoNLL-U's multiword and empty-node ids
_TAG_HINTS = {
    "IOB1": "O, I-TYPE or B-TYPE",
    "BIO": "O, B-TYPE or I-TYPE",
    "BIOUL": "O, B-TYPE, I-TYPE, L-TYPE or U-TYPE; E-/S- read as L-/U-",
}

Row = tuple[int, list[str]]  # (line number, the line's columns)


def iter_rows(
    path: str | Path,
    separator: str | None = None,
    comment_prefix: str | None = None,
    document_marker: str | None = DOCUMENT_MARKER,
    marker_column: int = 0,
    skip_token_ids: bool = False,
    max_tokens: int | None = None,
) -> Iterator[list[Row]]:
    """Each sentence's rows with their line numbers.

    Blank lines (after strip) end a sentence, and so does a line whose ``marker_column`` equals
    ``document_marker``. Lines starting with ``comment_prefix`` are skipped, and with
    ``skip_token_ids`` so are CoNLL-U's ``3-4`` and ``5.1`` lines (any other first column that
    is not a word id is a ``DataError`` naming the line). ``separator`` None splits on any
    whitespace. A sentence longer than ``max_tokens`` is a ``DataError`` naming the line it
    starts on.
    """
    rows: list[Row] = []
    for number, line in iter_lines(path, MAX_LINE_BYTES):
        stripped = line.strip()
        if comment_prefix is not None and stripped.startswith(comment_prefix):
            continue
        fields = line.split() if separator is None else line.rstrip("\r\n").split(separator)
        marker = (document_marker is not None and len(fields) > marker_column
                  and fields[marker_column] == document_marker)
        if not stripped or marker:
            if rows:
                yield rows
            rows = []
            continue
        if skip_token_ids and not _TOKEN_ID.fullmatch(fields[0]):
            if _SKIPPED_ID.fullmatch(fields[0]):
                continue
            raise DataError(f"{path}:{number}: {fields[0][:40]!r} is not a CoNLL-U word id (1, "
                            f"3-4 or 5.1): is this file CoNLL-U?")
        rows.append((number, fields))
        if max_tokens is not None and len(rows) > max_tokens:
            raise DataError(f"{path}:{rows[0][0]}: a sentence of more than {max_tokens:,} tokens "
                            f"(no blank line between sentences?); raise "
                            f"dataset_reader.max_sentence_length to read it")
    if rows:
        yield rows


def iter_sentences(path: str | Path, max_tokens: int | None = None
                   ) -> Iterator[tuple[int, list[list[str]]]]:
    """CoNLL-2003's sentences (NER's data, a pretraining corpus format): (first line number,
    rows of fields) per sentence, skipping ``-DOCSTART-`` lines;
    a sentence longer than ``max_tokens`` is a ``DataError`` naming where it starts."""
    for rows in iter_rows(path, max_tokens=max_tokens):
        yield rows[0][0], [fields for _, fields in rows]


class ColumnTaggingReader:
    """Reads one token column and one tag column per line; see the module docstring."""

    def __init__(
        self,
        token_indexers: TokenIndexers,
        token_column: Annotated[int, Bounds(0, math.inf)] = 0,  # 0: the first
        tag_column: int = -1,  # negative counts from the end (-1: the last)
        separator: NotEmpty = None,  # e.g. "\t"; null: any run of whitespace
        comment_prefix: NotEmpty = None,  # lines starting with it are skipped (CoNLL-U: "#")
        document_marker: NotEmpty = DOCUMENT_MARKER,  # a token column equal to it breaks a
        skip_token_ids: bool = False,  # document (null: none); true: skip lines whose first
        tag_scheme: str | None = None,  # column is no plain integer (CoNLL-U 3-4, 5.1)
        coding_scheme: str | None = None,  # the model's scheme; null: tag_scheme's
        max_sentence_length: Size = 1000,  # a longer sentence is an error naming it
        language: str = DEFAULT_LANGUAGE,
    ) -> None:
        if tag_column == token_column:
            raise ConfigValueError(f"tag_column {tag_column} is the token column")
        if tag_scheme is None and coding_scheme is not None:
            raise ConfigValueError(f"coding_scheme {coding_scheme!r} needs the file's "
                                   f"tag_scheme (null: plain labels, not converted)")
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()
        }
        self.token_column = token_column
        self.tag_column = tag_column
        self.separator = separator
        self.comment_prefix = comment_prefix
        self.document_marker = document_marker
        self.skip_token_ids = skip_token_ids
        self.tag_scheme = tag_scheme
        self.coding_scheme = coding_scheme or tag_scheme
        self.label_encoding = self.coding_scheme  # the scheme of the tags a model sees
        self.max_sentence_length = max_sentence_length
        self.language = language  # of raw text given to predict --text
        self.tag_name = tag_scheme  # "invalid <tag_name> tag ..."
        self.fields = {"tokens": TextField(self.token_indexers),
                       "tags": SequenceLabelField("tokens")}
        self._valid_tags: set[str] = set()

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        """One ``{"tokens", "tags"}`` instance per sentence of ``path`` (or ``path.gz``)."""
        resolved = resolve_data_path(path)
        instances = []
        for rows in iter_rows(resolved, self.separator, self.comment_prefix,
                              self.document_marker, self.token_column, self.skip_token_ids,
                              self.max_sentence_length):
            tokens, tags = [], []
            for number, fields in rows:
                token, tag = self._split_row(fields, rows[0][1], f"{resolved}:{number}")
                tokens.append(token)
                tags.append(tag)
            if self.tag_scheme is not None:
                tags = convert_tags(tags, self.tag_scheme, self.coding_scheme)
            instances.append({"tokens": tokens, "tags": tags})
        if not instances:
            raise DataError(f"{resolved}: no sentences found")
        return instances

    def text_to_instance(self, tokens: list[str], tags: list[str] | None = None) -> dict[str, Any]:
        """An instance of raw tokens (``predict --text``); tags, if given, in coding_scheme."""
        return {"tokens": tokens, "tags": tags}

    def column_problem(self, fields: list[str], first: list[str]) -> str | None:
        """What is wrong with a row's columns (``first``: its sentence's first row), or None."""
        count = len(fields)
        tag_index = self.tag_column if self.tag_column >= 0 else count + self.tag_column
        if count <= self.token_column or not 0 <= tag_index < count or \
                tag_index == self.token_column:
            return (f"{count} column{'s' if count != 1 else ''}, too few for token_column "
                    f"{self.token_column} and tag_column {self.tag_column}")
        if self.separator is not None and count != len(first):
            return (f"{count} columns, but the sentence's first row has {len(first)} "
                    f"(separator {self.separator!r})")
        return None

    def _split_row(self, fields: list[str], first: list[str], where: str) -> tuple[str, str]:
        """The row's (token, tag), or a one-line ``DataError`` naming ``where``."""
        problem = self.column_problem(fields, first)
        if problem is not None:
            raise DataError(f"{where}: {problem}")
        token, tag = fields[self.token_column], fields[self.tag_column]
        if not token or not tag:
            column = self.token_column if not token else self.tag_column
            raise DataError(f"{where}: empty {'token' if not token else 'tag'} "
                            f"(column {column})")
        if self.tag_scheme is not None and not self._is_tag(tag, self.tag_scheme):
            raise DataError(f"{where}: invalid {self.tag_name} tag {tag!r} (expected "
                            f"{_TAG_HINTS.get(self.tag_scheme, self.tag_scheme + ' tags')})")
        return token, tag

    def _is_tag(self, tag: str, scheme: str) -> bool:
        """Whether ``tag`` is a well-formed ``scheme`` tag (cached per distinct tag)."""
        if tag in self._valid_tags:
            return True
        if any(char.isspace() for char in tag):  # a tab-separated file's "B-PER X"
            return False
        try:
            tags_to_spans([tag], scheme)
        except ValueError:
            return False
        self._valid_tags.add(tag)
        return True


def _not_empty(value: Any) -> str | None:
    """A string setting must not be empty."""
    return "must not be empty (null for none)" if value == "" else None


NotEmpty = Annotated[str | None, Check(_not_empty)]


register(
    "dataset_reader",
    "column_tagging",
    params=[Param("tag_scheme", choices=SCHEMES), Param("coding_scheme", choices=SCHEMES),
            LANGUAGE_PARAM],
)(ColumnTaggingReader)
