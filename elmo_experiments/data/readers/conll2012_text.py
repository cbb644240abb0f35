"""The words of CoNLL-2012-style files (``#begin document`` ... ``#end document``; word in
column 4, a blank line between sentences), as LitBank and OntoNotes write them; the layout is
read by ``conll2012.iter_parts``. Words are kept as the file writes them (no unescaping)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from elmo_experiments.data.readers.conll2012 import WORD_COLUMN, iter_parts


def iter_documents(path: str | Path) -> Iterator[tuple[str, list[list[str]]]]:
    """(document name, sentences of words) for every document in a CoNLL-2012 file; the name
    is the ``#begin document`` line's text after the marker (``(one); part 0``)."""
    for part in iter_parts(path, WORD_COLUMN + 1, "document, part, index, word, ..."):
        yield part.header, [[fields[WORD_COLUMN] for _, fields in rows]
                            for rows in part.sentences]
