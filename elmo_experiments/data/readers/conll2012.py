"""The layout of CoNLL-2012 files (OntoNotes' ``*_gold_conll``, LitBank's ``.conll``), shared by
the SRL, coreference and plain-text readers.

A file holds document parts: ``#begin document (bc/cctv/00/cctv_0000); part 000`` ...
``#end document``; inside, one token per line in columns (document, part, word number, word,
..., the coreference column last), a blank line between sentences. OntoNotes aligns its columns
with spaces; LitBank separates them with tabs and leaves an empty last column where a token
has no coreference annotation (so tab-separated rows are split on tabs only).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from elmo_experiments.data.files import iter_lines, resolve_data_path
from elmo_experiments.data.tokenizers import unescape_ptb
from elmo_experiments.errors import DataError

BEGIN = "#begin document"
END = "#end document"
MAX_LINE_BYTES = 100_000
WORD_COLUMN = 3
SPEAKER_COLUMN = 9
_ONTONOTES_ESCAPE = re.compile(r"/([^\w\s/])")  # OntoNotes' "/." and "/-": "." and "-"
_HEADER = re.compile(r"\((.*)\);\s*part\s+(\S+)")

Row = tuple[int, list[str]]  # (line number, the line's columns)


def unescape_word(word: str) -> str:
    """A treebank word as text: ``-LRB-`` -> ``(`` (and the other bracket escapes), and
    OntoNotes' escaped punctuation ``/.`` -> ``.``, ``/-`` -> ``-``, ``/?`` -> ``?``."""
    match = _ONTONOTES_ESCAPE.fullmatch(word)
    return match[1] if match else unescape_ptb(word)


def split_columns(line: str, tabs: bool) -> list[str]:
    """A token line's columns: with ``tabs``, a line holding a tab is split on tabs only (empty
    columns kept: LitBank's last column), any other line on runs of whitespace."""
    if tabs and "\t" in line:
        return line.rstrip("\r\n").split("\t")
    return line.split()


def parse_header(text: str) -> tuple[str, str | None]:
    """``(bc/cctv/00/cctv_0000); part 000`` -> (``bc/cctv/00/cctv_0000``, ``000``); a header
    of another shape is the document id as it stands, with no part."""
    match = _HEADER.fullmatch(text.strip())
    return (match[1], match[2]) if match else (text.strip(), None)


def check_sentence_length(rows: list[Row], limit: int | None, path: Path) -> None:
    """A sentence over ``limit`` tokens is a ``DataError`` naming its first line."""
    if limit is not None and len(rows) > limit:
        raise DataError(f"{path}:{rows[0][0]}: a sentence of more than {limit:,} tokens (no "
                        f"blank line between sentences?); raise "
                        f"dataset_reader.max_sentence_length to read it")


def _lines(path: Path, tabs: bool, max_line_bytes: int | None
           ) -> Iterator[tuple[int, str, str | list[str] | None]]:
    """(line number, kind, value) per line: ``begin`` (the header's text), ``end``, ``blank``,
    or ``row`` (its columns)."""
    for number, line in iter_lines(path, max_line_bytes):
        text = line.strip()
        if text.startswith(BEGIN):
            yield number, "begin", text[len(BEGIN):].strip()
        elif text.startswith(END):
            yield number, "end", None
        elif not text:
            yield number, "blank", None
        else:
            yield number, "row", split_columns(line, tabs)


def iter_sentences(path: str | Path, max_line_bytes: int | None = MAX_LINE_BYTES,
                   max_sentence_length: int | None = None, tabs: bool = False
                   ) -> Iterator[tuple[list[Row], str | None]]:
    """Each sentence's rows and its document's header text, streamed: a ``#begin document``,
    an ``#end document`` or a blank line ends a sentence; an ``#end document`` may be missing.
    A token line outside a document is a ``DataError``."""
    resolved = resolve_data_path(path)
    rows: list[Row] = []
    document: str | None = None
    for number, kind, value in _lines(resolved, tabs, max_line_bytes):
        if kind != "row":
            if rows:
                yield rows, document
            rows = []
            if kind == "begin":
                assert isinstance(value, str)
                document = value
            elif kind == "end":
                document = None
            continue
        if document is None:
            raise DataError(f"{resolved}:{number}: token line outside '{BEGIN}'")
        assert isinstance(value, list)
        rows.append((number, value))
        check_sentence_length(rows, max_sentence_length, resolved)
    if rows:
        yield rows, document


@dataclass
class Part:
    """One ``#begin document`` ... ``#end document`` block: its header (``header``: the text
    after ``#begin document``; ``document``, ``part``: its parsed name and part), the lines of
    its two markers, and its sentences' rows."""

    header: str
    document: str
    part: str | None
    begin_line: int
    end_line: int = 0
    sentences: list[list[Row]] = field(default_factory=list)


def iter_parts(path: str | Path, min_columns: int = WORD_COLUMN + 1, layout: str = "",
               max_line_bytes: int | None = None, tabs: bool = True) -> Iterator[Part]:
    """Every document part of a file, checked: a row of fewer than ``min_columns`` columns
    (``layout`` names them), a token line outside a part, a ``#begin document`` inside one, a
    stray ``#end document`` and a part never ended are one-line ``DataError``s naming the
    file and line."""
    resolved = resolve_data_path(path)
    part: Part | None = None
    rows: list[Row] = []
    for number, kind, value in _lines(resolved, tabs, max_line_bytes):
        if kind == "row":
            assert isinstance(value, list)
            if len(value) < min_columns:
                raise DataError(f"{resolved}:{number}: expected at least {min_columns} columns "
                                f"({layout}), found {len(value)}")
            if part is None:
                raise DataError(f"{resolved}:{number}: token line outside '{BEGIN}'")
            rows.append((number, value))
            continue
        if rows and part is not None:
            part.sentences.append(rows)
        rows = []
        if kind == "begin":
            if part is not None:
                raise DataError(f"{resolved}:{number}: '{BEGIN}' inside document "
                                f"{part.header!r} (line {part.begin_line}), which has no "
                                f"'{END}' line")
            assert isinstance(value, str)
            part = Part(value, *parse_header(value), begin_line=number)
        elif kind == "end":
            if part is None:
                raise DataError(f"{resolved}:{number}: '{END}' without a '{BEGIN}'")
            part.end_line = number
            yield part
            part = None
    if part is not None:
        raise DataError(f"{resolved}:{part.begin_line}: document {part.header!r} has no "
                        f"'{END}' line")
