"""CoNLL-2003 (``word POS chunk NER`` per line, IOB1 tags, ``-DOCSTART-`` lines)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.config.registry import AT_LEAST_ONE, Param, Spec, register
from elmo_experiments.data.fields import SequenceLabelField, TextField
from elmo_experiments.data.files import iter_lines, resolve_data_path
from elmo_experiments.data.tag_schemes import convert_tags
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.errors import DataError

COLUMNS = {"pos": 1, "chunk": 2, "ner": 3}
_CHUNK_TAG = re.compile(r"^(O|[IB]-\S+)$")


def iter_sentences(path: str | Path, max_tokens: int | None = None
                   ) -> Iterator[tuple[int, list[list[str]]]]:
    """Yield (first line number, rows of fields) per sentence, skipping ``-DOCSTART-`` lines;
    a sentence longer than ``max_tokens`` is a ``DataError`` naming where it starts."""
    rows: list[list[str]] = []
    start = 0
    for number, line in iter_lines(path, 10_000):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if rows:
                yield start, rows
            rows = []
            continue
        if not rows:
            start = number
        rows.append(fields)
        if max_tokens is not None and len(rows) > max_tokens:
            raise DataError(f"{path}:{start}: a sentence of more than {max_tokens:,} tokens (no "
                            f"blank line between sentences?); raise "
                            f"dataset_reader.max_sentence_length to read it")
    if rows:
        yield start, rows


class Conll2003Reader:
    """Reads tokens and one tag column; converts IOB1 chunk tags to ``coding_scheme``."""

    def __init__(
        self,
        token_indexers: dict[str, Spec],
        tag_label: str = "ner",
        coding_scheme: str = "BIOUL",
        max_sentence_length: int = 1000,
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()
        }
        self.tag_label = tag_label
        self.label_encoding = coding_scheme if tag_label != "pos" else None
        self.coding_scheme = coding_scheme
        self.max_sentence_length = max_sentence_length
        self.fields = {"tokens": TextField(self.token_indexers),
                       "tags": SequenceLabelField("tokens")}

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        resolved = resolve_data_path(path)
        instances = []
        column = COLUMNS[self.tag_label]
        for start, rows in iter_sentences(resolved, self.max_sentence_length):
            for offset, fields in enumerate(rows):
                if len(fields) != 4:
                    raise DataError(
                        f"{resolved}:{start + offset}: expected 4 columns "
                        f"(word POS chunk NER), found {len(fields)}"
                    )
                if self.tag_label != "pos" and not _CHUNK_TAG.match(fields[column]):
                    raise DataError(
                        f"{resolved}:{start + offset}: invalid {self.tag_label} tag "
                        f"{fields[column]!r} (expected O, I-TYPE or B-TYPE)"
                    )
            tokens = [fields[0] for fields in rows]
            tags = [fields[column] for fields in rows]
            if self.tag_label != "pos":
                tags = convert_tags(tags, "IOB1", self.coding_scheme)
            instances.append({"tokens": tokens, "tags": tags})
        if not instances:
            raise DataError(f"{resolved}: no sentences found")
        return instances

    def text_to_instance(self, tokens: list[str], tags: list[str] | None = None) -> dict[str, Any]:
        return {"tokens": tokens, "tags": tags}


register(
    "dataset_reader",
    "conll2003",
    params=[
        Param("token_indexers", component="token_indexer", mapping=True),
        Param("tag_label", str, "ner", choices=("ner", "pos", "chunk")),
        Param("coding_scheme", str, "BIOUL", choices=("IOB1", "BIO", "BIOUL")),
        Param("max_sentence_length", int, 1000, bounds=AT_LEAST_ONE,
              doc="longest sentence read, in tokens: a longer one is an error naming it"),
    ],
)(Conll2003Reader)
