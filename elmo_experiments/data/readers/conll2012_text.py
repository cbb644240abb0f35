"""The words of CoNLL-2012-style files (``#begin document`` ... ``#end document``; word in
column 4, a blank line between sentences), as LitBank and OntoNotes write them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from elmo_experiments.data.files import iter_lines
from elmo_experiments.errors import DataError

WORD_COLUMN = 3


def iter_documents(path: str | Path) -> Iterator[tuple[str, list[list[str]]]]:
    """(document name, sentences of words) for every document in a CoNLL-2012 file."""
    name: str | None = None
    sentences: list[list[str]] = []
    sentence: list[str] = []
    for number, line in iter_lines(path):
        text = line.rstrip("\n")
        if text.startswith("#begin document"):
            name, sentences, sentence = text[len("#begin document"):].strip(), [], []
            continue
        if text.startswith("#end document"):
            if sentence:
                sentences.append(sentence)
            if name is not None:
                yield name, sentences
            name, sentences, sentence = None, [], []
            continue
        if not text.strip():
            if sentence:
                sentences.append(sentence)
            sentence = []
            continue
        fields = text.split("\t") if "\t" in text else text.split()
        if len(fields) <= WORD_COLUMN:
            raise DataError(f"{path}:{number}: expected at least {WORD_COLUMN + 1} columns "
                            f"(document, part, index, word, ...), found {len(fields)}")
        if name is None:
            raise DataError(f"{path}:{number}: token line outside '#begin document'")
        sentence.append(fields[WORD_COLUMN])
    if name is not None:
        raise DataError(f"{path}: document {name!r} has no '#end document' line")
