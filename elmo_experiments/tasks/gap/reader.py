"""GAP's TSV files (``gap_tsv``): a header line, then one example per line, tab-separated::

    ID  Text  Pronoun  Pronoun-offset  A  A-offset  A-coref  B  B-offset  B-coref  URL

Offsets count characters of ``Text`` (from 0) where the pronoun and the two names begin;
``A-coref`` and ``B-coref`` are ``TRUE`` or ``FALSE`` (at most one TRUE). One instance per
example::

    {"text": [str],                          # Text, tokenised as the project tokenises raw text
     "pronoun": (start, end),                # inclusive token spans of the pronoun, A and B
     "a": (start, end), "b": (start, end),
     "id": str,                              # the example's ID (the scorer's key)
     "a_coref": bool | None,                 # gold (None: not given)
     "b_coref": bool | None,
     "gender": "M" | "F",                    # from the pronoun's form (he/him/his, she/her/hers)
     "mentions": {"pronoun": str, "a": str, "b": str}}

A mention's token span covers every token its characters touch. An offset that does not fall
on the text, or where the text does not read the named string, is a one-line ``DataError``
naming the file, the line and the field.
"""

from __future__ import annotations

import math
import unicodedata
from itertools import combinations
from pathlib import Path
from typing import Annotated, Any

from elmo_experiments.config.registry import Bounds, Size, TokenIndexers, register
from elmo_experiments.data.fields import MetadataField, SpanField, TextField
from elmo_experiments.data.files import iter_lines, resolve_data_path
from elmo_experiments.data.read_report import ReadReport
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.data.tokenizers import tokenize_with_offsets
from elmo_experiments.errors import DataError

COLUMNS = ("ID", "Text", "Pronoun", "Pronoun-offset", "A", "A-offset", "A-coref", "B",
           "B-offset", "B-coref", "URL")
# the official scorer's pronoun forms (GAP has no reflexives): the gender of an example
GENDERS = {"he": "M", "him": "M", "his": "M", "she": "F", "her": "F", "hers": "F"}
MENTIONS = (("pronoun", "Pronoun"), ("a", "A"), ("b", "B"))
# the columns as text_to_instance's arguments call them (its errors name those)
ARGUMENTS = {column: key for key, column in MENTIONS} | {
    f"{column}-offset": f"{key}_offset" for key, column in MENTIONS}
MAX_OFFSET_DIGITS = 18  # more is no offset into any text (and int() refuses over 4,300)

Span = tuple[int, int]


def parse_bool(value: str, field: str, where: str) -> bool:
    """``TRUE``/``FALSE`` (any case), else a one-line ``DataError`` naming ``field``."""
    if value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise DataError(f"{where}: {field} is {value!r}, not TRUE or FALSE")


def line_end_hint(line: str) -> str:
    """A hint for a first line that holds the whole file: lines ending in a lone CR."""
    return " (its lines end in a lone CR, old Mac style: convert them to LF)" \
        if "\r" in line.rstrip("\r\n") else ""


def _invisible(character: str) -> bool:
    """A space, or a character drawn as nothing (a BOM or zero-width space: Unicode's Cf)."""
    return character.isspace() or unicodedata.category(character) == "Cf"


def check_id(example_id: str, where: str) -> None:
    """An example's ID: not empty, no spaces or invisible characters (a BOM left where two
    files were joined) at its ends: ``t-1 `` would be another ID."""
    if all(_invisible(c) for c in example_id):
        raise DataError(f"{where}: the ID is empty")
    if _invisible(example_id[0]) or _invisible(example_id[-1]):
        raise DataError(f"{where}: the ID {example_id!r} has spaces or invisible characters "
                        f"at its ends")


def is_header(cells: list[str]) -> bool:
    """Whether a line's tab-separated ``cells`` are GAP's header."""
    return tuple(c.strip() for c in cells) == COLUMNS


def check_one_referent(a_coref: bool | None, b_coref: bool | None, where: str) -> None:
    """A pronoun refers to one of the names at most: both TRUE is a one-line ``DataError``."""
    if a_coref and b_coref:
        raise DataError(f"{where}: A-coref and B-coref are both TRUE (one pronoun, at most "
                        f"one of the names)")


def gender_of(pronoun: str) -> str | None:
    """``M`` or ``F`` from a pronoun's form, as the official scorer reads it; None otherwise."""
    return GENDERS.get(pronoun.strip().lower())


def parse_offset(offset: Any, field: str, where: str) -> int:
    """A character offset: a non-negative int, or its ASCII digits (``²`` and other digits
    ``str.isdigit`` admits but ``int`` refuses are errors, not tracebacks)."""
    if isinstance(offset, str):
        digits = offset.strip()
        if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_OFFSET_DIGITS:
            raise DataError(f"{where}: {field} {offset[:30]!r} is not a character offset")
        return int(digits)
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise DataError(f"{where}: {field} {offset!r} is not a character offset")
    return offset


def token_span(tokens: list[tuple[str, int, int]], text: str, name: str, offset: Any,
               field: str, where: str, whole_tokens: bool = False) -> Span:
    """The inclusive token span of ``name`` at character ``offset`` of ``text``; a one-line
    ``DataError`` naming ``field`` where the offset is off the text or the text there is not
    ``name``, or (``whole_tokens``: the pronoun) where ``name`` is only part of a token."""
    offset = parse_offset(offset, field, where)
    if not name:
        raise DataError(f"{where}: the string at {field} is empty")
    end = offset + len(name)
    if offset < 0 or end > len(text):
        raise DataError(f"{where}: {field} {offset}: {name!r} does not fall on the text "
                        f"({len(text)} characters)")
    if text[offset:end] != name:
        same = unicodedata.normalize("NFC", text[offset:]).startswith(
            unicodedata.normalize("NFC", name))  # the same letters, composed differently
        hint = (" (the same letters in another Unicode normalization: normalize the file, "
                "e.g. to NFC)" if same else "")
        raise DataError(f"{where}: {field} {offset}: the text there reads "
                        f"{text[offset:end]!r}, not {name!r}{hint}")
    touched = [i for i, (_, start, stop) in enumerate(tokens) if start < end and stop > offset]
    if not touched:
        raise DataError(f"{where}: {field} {offset}: {name!r} covers no token")
    first, last = tokens[touched[0]], tokens[touched[-1]]
    if whole_tokens and (first[1] != offset or last[2] != end):
        word = text[first[1]:last[2]]
        raise DataError(f"{where}: {field} {offset}: {name!r} is part of the word {word!r}, "
                        f"not a word of its own")
    return touched[0], touched[-1]


class GapReader:
    """GAP's examples (see the module's docstring); ``max_tokens`` drops longer texts (0: none)
    with a note in the read report."""

    def __init__(
        self,
        token_indexers: TokenIndexers,
        max_tokens: Annotated[int, Bounds(0, math.inf)] = 0,  # longer texts dropped (0: none)
        max_line_length: Size = 200_000,  # longest line read, in bytes (longer: an error)
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()}
        self.max_tokens = max_tokens
        self.max_line_length = max_line_length
        self.fields = {"text": TextField(self.token_indexers),
                       "pronoun": SpanField("text"), "a": SpanField("text"),
                       "b": SpanField("text"),
                       **{name: MetadataField() for name in ("id", "a_coref", "b_coref",
                                                             "gender", "mentions")}}
        self.read_report = ReadReport("examples")

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        resolved = resolve_data_path(path)
        report = self.read_report = ReadReport("examples")
        instances: list[dict[str, Any]] = []
        seen: dict[str, int] = {}
        header = False
        for number, line in iter_lines(resolved, self.max_line_length,
                                       "dataset_reader.max_line_length"):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            where = f"{resolved}:{number}"
            cells = line.split("\t")
            if not header:
                if not is_header(cells):
                    raise DataError(f"{where}: the header must be the {len(COLUMNS)} columns "
                                    f"{' '.join(COLUMNS)}, tab-separated{line_end_hint(line)}")
                header = True
                continue
            if len(cells) != len(COLUMNS):
                raise DataError(f"{where}: {len(cells)} tab-separated columns, GAP has "
                                f"{len(COLUMNS)} ({' '.join(COLUMNS)}){line_end_hint(line)}")
            row = dict(zip(COLUMNS, cells, strict=True))
            check_id(row["ID"], where)
            if row["ID"] in seen:
                raise DataError(f"{where}: ID {row['ID']!r} again (first on line "
                                f"{seen[row['ID']]})")
            seen[row["ID"]] = number
            report.read += 1
            instance = self.row_to_instance(row, where)
            if self.max_tokens and len(instance["text"]) > self.max_tokens:
                report.drop(f"longer than max_tokens={self.max_tokens}")
                continue
            instances.append(instance)
        if not instances:
            found = f" ({report.describe()})" if report.read else ""
            raise DataError(f"{resolved}: no GAP examples found{found}")
        return instances

    def row_to_instance(self, row: dict[str, Any], where: str,
                        names: dict[str, str] | None = None) -> dict[str, Any]:
        """One example from its columns (gold ``A-coref``/``B-coref`` where given); errors
        call a column by its name in ``names`` (default: the column's)."""
        names = names or {}
        text = row["Text"]
        tokens = tokenize_with_offsets(text)
        instance: dict[str, Any] = {"text": [t for t, _, _ in tokens]}
        for key, column in MENTIONS:
            field = f"{column}-offset"
            instance[key] = token_span(tokens, text, row[column], row[field],
                                       names.get(field, field), where,
                                       whole_tokens=key == "pronoun")
        for (one, first), (other, second) in combinations(MENTIONS, 2):
            if instance[one][0] <= instance[other][1] and instance[other][0] <= instance[one][1]:
                raise DataError(f"{where}: {names.get(first, first)} {row[first]!r} and "
                                f"{names.get(second, second)} {row[second]!r} share words: "
                                f"each mention must be words of its own")
        gender = gender_of(row["Pronoun"])
        if gender is None:
            raise DataError(f"{where}: Pronoun {row['Pronoun']!r} is not one of "
                            f"{', '.join(GENDERS)}")
        labels = {}
        for key, column in (("a_coref", "A-coref"), ("b_coref", "B-coref")):
            value = row.get(column)
            labels[key] = None if value is None else parse_bool(value, column, where)
        check_one_referent(labels["a_coref"], labels["b_coref"], where)
        return {**instance, "id": row["ID"], **labels, "gender": gender,
                "mentions": {key: row[column] for key, column in MENTIONS}}

    def text_to_instance(self, text: str, pronoun: str, pronoun_offset: int, a: str,
                         a_offset: int, b: str, b_offset: int,
                         example_id: str = "input") -> dict[str, Any]:
        """An unlabelled example (``predict``, the server)."""
        return self.row_to_instance(
            {"ID": example_id, "Text": text, "Pronoun": pronoun,
             "Pronoun-offset": pronoun_offset, "A": a, "A-offset": a_offset, "B": b,
             "B-offset": b_offset}, example_id, ARGUMENTS)


register("dataset_reader", "gap_tsv")(GapReader)
