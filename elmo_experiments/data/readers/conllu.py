"""CoNLL-U treebanks (Universal Dependencies): one word per line, ten tab-separated columns,
``#`` comments; multiword ``3-4`` and empty-node ``5.1`` lines are skipped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from elmo_experiments.data.readers.column_tagging import iter_rows
from elmo_experiments.errors import DataError

FORM, UPOS, XPOS = 1, 3, 4  # columns
COLUMNS = 10


def iter_conllu(path: str | Path) -> Iterator[list[list[str]]]:
    """Each sentence's word lines, split into their columns (at least up to XPOS)."""
    for rows in iter_rows(path, "\t", "#", None, 0, True):
        for number, fields in rows:
            if len(fields) <= XPOS:
                raise DataError(f"{path}:{number}: {len(fields)} columns, not CoNLL-U's "
                                f"{COLUMNS}")
        yield [fields for _, fields in rows]
