"""NER's reader: CoNLL-2003 (``word POS chunk NER`` per line, IOB1 tags, ``-DOCSTART-`` lines)."""

from __future__ import annotations

from typing import Annotated, Literal

from elmo_experiments.config.registry import Check, Size, TokenIndexers, register
from elmo_experiments.data.languages import DEFAULT_LANGUAGE, language_problem
from elmo_experiments.data.readers.column_tagging import ColumnTaggingReader, iter_sentences

# iter_sentences (the format, shared) as well: the old path data.readers.conll2003 gave it
__all__ = ["COLUMNS", "Conll2003Reader", "iter_sentences"]

COLUMNS = {"pos": 1, "chunk": 2, "ner": 3}


class Conll2003Reader(ColumnTaggingReader):
    """Reads tokens and one tag column; converts IOB1 chunk tags to ``coding_scheme``.

    A configuration of the ``column_tagging`` reader: exactly 4 whitespace-separated columns.
    """

    def __init__(
        self,
        token_indexers: TokenIndexers,
        tag_label: Literal["ner", "pos", "chunk"] = "ner",
        coding_scheme: Literal["IOB1", "BIO", "BIOUL"] = "BIOUL",
        max_sentence_length: Size = 1000,  # longest sentence read, in tokens (longer: an error)
        language: Annotated[str, Check(language_problem)] = DEFAULT_LANGUAGE,  # raw text's
    ) -> None:
        chunks = tag_label != "pos"
        super().__init__(token_indexers, token_column=0, tag_column=COLUMNS[tag_label],
                         tag_scheme="IOB1" if chunks else None,
                         coding_scheme=coding_scheme if chunks else None,
                         max_sentence_length=max_sentence_length, language=language)
        self.tag_label = tag_label
        self.tag_name = tag_label
        self.coding_scheme = coding_scheme

    def column_problem(self, fields: list[str], first: list[str]) -> str | None:
        """Every row has the 4 columns."""
        if len(fields) != 4:
            return f"expected 4 columns (word POS chunk NER), found {len(fields)}"
        return None


register("dataset_reader", "conll2003")(Conll2003Reader)
