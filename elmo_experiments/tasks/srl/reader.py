"""Semantic role labelling data: CoNLL-2005 combined column files (``srl_conll2005``) and
CoNLL-2012 ``*_gold_conll`` files (``srl_conll2012``); ``reproduction/srl/README.md`` has the
formats.

One instance per predicate (a sentence with none gives no instance)::

    {"tokens": [str],              # the sentence's words (one list shared by its predicates)
     "predicate": [0, .., 1, .., 0],  # 1 at the predicate's token
     "tags": [str],                # BIO tags of its arguments: B-A0, I-A0, B-V, B-C-A1, O
     "sentence_id": int,           # 0-based index of the sentence in the file
     "predicate_index": int,       # the predicate's token index
     "predicate_number": int,      # 0-based, among the sentence's predicates (props column order)
     "lemma": str,                 # the predicate's lemma as the file gives it
     "sentence_length": int, "sentence_predicates": int}

After ``read``, ``reader.sentences`` lists every sentence of the file read last, predicate-less
ones included, as ``SrlSentence`` records (``reader.sentences_by_path`` keeps every file read,
by resolved path), so a props writer can write a file line for line in the data's order;
``reader.read_report`` counts its sentences and those without a predicate (``read_report.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from elmo_experiments.config.registry import AT_LEAST_ONE, Bounds, Size, TokenIndexers, register
from elmo_experiments.data.fields import MetadataField, SequenceLabelField, TensorField, TextField
from elmo_experiments.data.files import iter_lines, resolve_data_path
from elmo_experiments.data.read_report import ReadReport
from elmo_experiments.data.readers.conll2012 import (
    MAX_LINE_BYTES,
    Row,
    check_sentence_length,
    iter_sentences,
    unescape_word,
)
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.srl.tags import BracketError, Span, brackets_to_spans, spans_to_bio

logger = logging.getLogger("elmo_experiments")

NO_PREDICATE = "-"


@dataclass(frozen=True)
class SrlSentence:
    """One sentence of a file, with or without predicates.

    ``line``: the line its first token is on. ``targets``: one value per token, the
    predicate's lemma at each predicate and ``-`` elsewhere (CoNLL-2005: exactly the file's
    target column, the first column of a props file). ``predicates``: the predicates' token
    indices in props-column order. ``instances``: the indices, in the list ``read`` returned,
    of their instances (same order). ``document``: the CoNLL-2012 document (``#begin
    document``'s text), None for CoNLL-2005.
    """

    sentence_id: int
    line: int
    length: int
    targets: tuple[str, ...]
    predicates: tuple[int, ...]
    instances: tuple[int, ...]
    document: str | None = None


@dataclass
class _Sentence:
    """A sentence as read from either format, before it becomes instances."""

    rows: list[Row]
    words: list[str]
    predicates: list[int]
    lemmas: list[str]
    columns: list[list[str]]  # one props column per predicate
    first_props_column: int  # 0-based index of the first props column in a row
    document: str | None = None


class SrlReader:
    """CoNLL-2005 combined column files: word, POS, parse, NE, verb sense, target lemma, then
    one props column per predicate (see the module docstring for the instances).

    ``max_sentence_length``: a longer sentence is an error naming it. ``max_sentences``: read
    only the file's first N sentences (predicate-less ones count). ``unescape``: words as text
    (``unescape_word``); false keeps the file's words.
    """

    format = "conll2005"
    word_column = 0
    fixed_columns = 6  # before the props columns
    trailing_columns = 0  # after them (CoNLL-2012: coreference)

    def __init__(
        self,
        token_indexers: TokenIndexers,
        max_sentence_length: Size = 1000,  # longest sentence read, in tokens (longer: an error)
        # read only the file's first N sentences (a small set for CPU-sized runs)
        max_sentences: Annotated[int | None, Bounds(*AT_LEAST_ONE)] = None,
        unescape: bool = True,  # words as text: -LRB- -> (, OntoNotes' /. -> . ; false: as is
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()}
        self.max_sentence_length = max_sentence_length
        self.max_sentences = max_sentences
        self.unescape = unescape
        self.label_encoding = "BIO"
        self.fields = {"tokens": TextField(self.token_indexers),
                       "predicate": TensorField("tokens", "long"),
                       "tags": SequenceLabelField("tokens"),
                       **{name: MetadataField() for name in (
                           "sentence_id", "predicate_index", "predicate_number", "lemma",
                           "sentence_length", "sentence_predicates")}}
        self.sentences: list[SrlSentence] = []
        self.sentences_by_path: dict[str, list[SrlSentence]] = {}
        self.read_report = ReadReport("sentences")

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        """One instance per predicate of ``path`` (or ``path.gz``), in file order."""
        resolved = resolve_data_path(path)
        instances: list[dict[str, Any]] = []
        sentences: list[SrlSentence] = []
        arguments = 0
        for sentence in self._sentences(resolved):
            sentence_id = len(sentences)
            words = [unescape_word(w) for w in sentence.words] if self.unescape \
                else sentence.words
            length = len(words)
            first = len(instances)
            for number, (index, lemma, column) in enumerate(
                    zip(sentence.predicates, sentence.lemmas, sentence.columns, strict=True)):
                spans = self._spans(column, sentence, number, resolved)
                arguments += sum(label != "V" for label, _, _ in spans)
                instances.append({
                    "tokens": words,
                    "predicate": [int(i == index) for i in range(length)],
                    "tags": spans_to_bio(spans, length),
                    "sentence_id": sentence_id, "predicate_index": index,
                    "predicate_number": number, "lemma": lemma, "sentence_length": length,
                    "sentence_predicates": len(sentence.predicates)})
            targets = [NO_PREDICATE] * length
            for index, lemma in zip(sentence.predicates, sentence.lemmas, strict=True):
                targets[index] = lemma
            sentences.append(SrlSentence(sentence_id, sentence.rows[0][0], length,
                                         tuple(targets), tuple(sentence.predicates),
                                         tuple(range(first, len(instances))), sentence.document))
        if not sentences:
            raise DataError(f"{resolved}: no sentences found")
        self.sentences = sentences
        self.sentences_by_path[str(resolved)] = sentences
        bare = sum(not s.predicates for s in sentences)
        self.read_report = ReadReport("sentences", len(sentences))
        if bare:
            self.read_report.dropped["without a predicate"] = bare
        logger.info("%s: %s sentences (%s without a predicate), %s predicates, %s arguments "
                    "(V not counted)", resolved.name, f"{len(sentences):,}", f"{bare:,}",
                    f"{len(instances):,}", f"{arguments:,}")
        return instances

    def text_to_instance(self, tokens: list[str], predicate_index: int | None = None,
                         tags: list[str] | None = None) -> dict[str, Any]:
        """An instance of raw tokens for the predicate at ``predicate_index``; ``tags`` (BIO)
        if known."""
        if predicate_index is None or not 0 <= predicate_index < len(tokens):
            raise DataError(f"semantic role labelling needs a predicate inside the "
                            f"{len(tokens)} tokens, got predicate_index {predicate_index}")
        return {"tokens": tokens,
                "predicate": [int(i == predicate_index) for i in range(len(tokens))],
                "tags": tags, "sentence_id": None, "predicate_index": predicate_index,
                "predicate_number": 0, "lemma": tokens[predicate_index],
                "sentence_length": len(tokens), "sentence_predicates": 1}

    def _spans(self, column: list[str], sentence: _Sentence, number: int,
               resolved: Path) -> list[Span]:
        """The arguments of one props column, or a one-line ``DataError`` naming its line."""
        try:
            return brackets_to_spans(column)
        except BracketError as error:
            line = sentence.rows[error.index][0]
            raise DataError(f"{resolved}:{line}: predicate {number + 1} (column "
                            f"{sentence.first_props_column + number + 1}): {error.reason}"
                            ) from None

    def _blocks(self, resolved: Path) -> Iterator[tuple[list[Row], str | None]]:
        """Each sentence's rows (CoNLL-2005: a line that is blank after strip ends one)."""
        rows: list[Row] = []
        for number, line in iter_lines(resolved, MAX_LINE_BYTES):
            if not line.strip():
                if rows:
                    yield rows, None
                rows = []
                continue
            rows.append((number, line.split()))
            self._check_length(rows, resolved)
        if rows:
            yield rows, None

    def _check_length(self, rows: list[Row], resolved: Path) -> None:
        check_sentence_length(rows, self.max_sentence_length, resolved)

    def _sentences(self, resolved: Path) -> Iterator[_Sentence]:
        """The file's first ``max_sentences`` sentences, their columns checked."""
        for count, (rows, document) in enumerate(self._blocks(resolved)):
            if self.max_sentences is not None and count >= self.max_sentences:
                return
            yield self._sentence(rows, document, resolved)

    def _sentence(self, rows: list[Row], document: str | None, resolved: Path) -> _Sentence:
        """A sentence's words, predicates and props columns; a bad row is a ``DataError``."""
        first_line, first = rows[0]
        needed = self.fixed_columns + self.trailing_columns
        for number, fields in rows:
            if len(fields) < needed:
                raise DataError(f"{resolved}:{number}: {len(fields)} columns, expected at least "
                                f"{needed} ({self._layout()})")
            if len(fields) != len(first):
                raise DataError(f"{resolved}:{number}: {len(fields)} columns, but the "
                                f"sentence's first row (line {first_line}) has {len(first)}")
        count = len(first) - needed
        end = self.fixed_columns + count
        columns = [[fields[c] for _, fields in rows] for c in range(self.fixed_columns, end)]
        predicates, lemmas = self._predicates(rows, columns, resolved)
        return _Sentence(rows, [fields[self.word_column] for _, fields in rows], predicates,
                         lemmas, columns, self.fixed_columns, document)

    def _layout(self) -> str:
        return "word, POS, parse, NE, sense, target lemma, then one props column per predicate"

    def _predicates(self, rows: list[Row], columns: list[list[str]], resolved: Path
                    ) -> tuple[list[int], list[str]]:
        """The predicates' token indices and lemmas, one per props column, in order."""
        predicates = [i for i, (_, fields) in enumerate(rows) if fields[5] != NO_PREDICATE]
        if len(predicates) != len(columns):
            raise DataError(f"{resolved}:{rows[0][0]}: {len(predicates)} target lemmas in "
                            f"column 6 but {len(columns)} props columns")
        return predicates, [rows[i][1][5] for i in predicates]


class Conll2012SrlReader(SrlReader):
    """CoNLL-2012 ``*_gold_conll``: ``#begin document``/``#end document`` lines, a blank line
    between sentences; columns document, part, word number, word, POS, parse, predicate lemma,
    frameset id, word sense, speaker, named entities, one props column per predicate, then
    coreference.

    The predicates are the rows with a frameset id (column 8), in order, when there are as many
    as props columns; otherwise each column's predicate is the first token of its ``V``
    argument. The lemma is column 7's.
    """

    format = "conll2012"
    fixed_columns = 11
    trailing_columns = 1
    word_column = 3

    def _layout(self) -> str:
        return ("document, part, word number, word, POS, parse, lemma, frameset, sense, "
                "speaker, NE, one props column per predicate, coreference")

    def _blocks(self, resolved: Path) -> Iterator[tuple[list[Row], str | None]]:
        """Each sentence's rows and its document (``conll2012.iter_sentences``)."""
        return iter_sentences(resolved, MAX_LINE_BYTES, self.max_sentence_length)

    def _predicates(self, rows: list[Row], columns: list[list[str]], resolved: Path
                    ) -> tuple[list[int], list[str]]:
        framesets = [i for i, (_, fields) in enumerate(rows) if fields[7] != NO_PREDICATE]
        if len(framesets) == len(columns):
            return framesets, [rows[i][1][6] for i in framesets]
        predicates = []
        for number, column in enumerate(columns):
            starts = [i for i, cell in enumerate(column) if cell.startswith("(V*")]
            if not starts:
                raise DataError(
                    f"{resolved}:{rows[0][0]}: {len(framesets)} frameset ids in column 8 but "
                    f"{len(columns)} props columns, and predicate {number + 1} (column "
                    f"{self.fixed_columns + number + 1}) has no V argument to find it by")
            predicates.append(starts[0])
        return predicates, [rows[i][1][6] for i in predicates]


register("dataset_reader", "srl_conll2005")(SrlReader)
register("dataset_reader", "srl_conll2012")(Conll2012SrlReader)
