"""NER's reader: CoNLL-2003 (``word POS chunk NER`` per line, IOB1 tags, ``-DOCSTART-`` lines)."""

from __future__ import annotations

from elmo_experiments.config.registry import AT_LEAST_ONE, Param, Spec, register
from elmo_experiments.data.languages import DEFAULT_LANGUAGE, LANGUAGE_PARAM
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
        token_indexers: dict[str, Spec],
        tag_label: str = "ner",
        coding_scheme: str = "BIOUL",
        max_sentence_length: int = 1000,
        language: str = DEFAULT_LANGUAGE,
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


register(
    "dataset_reader",
    "conll2003",
    params=[
        Param("token_indexers", component="token_indexer", mapping=True),
        Param("tag_label", str, "ner", choices=("ner", "pos", "chunk")),
        Param("coding_scheme", str, "BIOUL", choices=("IOB1", "BIO", "BIOUL")),
        Param("max_sentence_length", int, 1000, bounds=AT_LEAST_ONE,
              doc="longest sentence read, in tokens: a longer one is an error naming it"),
        LANGUAGE_PARAM,
    ],
)(Conll2003Reader)
