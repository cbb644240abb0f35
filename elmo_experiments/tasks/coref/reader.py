"""Coreference data in the CoNLL-2012 format (``coref_conll2012``): OntoNotes' ``*_gold_conll``
files and LitBank's ``.conll`` files; ``reproduction/coref/README.md`` has the formats.

One instance per document part, or with ``max_sentences`` (training) per window of at most
that many consecutive sentences of a part::

    {"document": [[str]],             # the sentences' words
     "clusters": [[[start, end]]],    # gold clusters: inclusive token indices over the
                                      # instance's tokens end to end; each cluster sorted,
                                      # the clusters ordered by their first mention
     "document_id": str,              # "bc/cctv/00/cctv_0000" (from "#begin document (...)")
     "part": str | None,              # "000" ("; part 000"), as the file writes it
     "speakers": [[str]] | None,      # per sentence, per token: the speaker column (None:
                                      # the file has none, LitBank's "_")
     "genre": str | None,             # OntoNotes' "bc", "nw", ... (None: an id without "/")
     "sentence_offsets": [int],       # the first token of each sentence
     "window": {"index": int, "first_sentence": int, "first_token": int, "windows": int}
               | None}                # where a window starts in its part; None: a whole part

A data path is a file (or its ``.gz``), a folder (its ``*conll`` files, recursively), a glob,
or ``FOLDER#SPLIT``: the files of ``FOLDER`` that a split file (LitBank's ``split.json``)
lists under ``SPLIT``.
"""

from __future__ import annotations

import glob
import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from elmo_experiments.config.registry import (
    AT_LEAST_ONE,
    Bounds,
    Check,
    TokenIndexers,
    register,
)
from elmo_experiments.data.fields import ListTextField, MetadataField
from elmo_experiments.data.files import read_json, resolve_data_path
from elmo_experiments.data.readers.conll2012 import (
    MAX_LINE_BYTES,
    SPEAKER_COLUMN,
    WORD_COLUMN,
    Part,
    Row,
    iter_parts,
    unescape_word,
)
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.errors import DataError

logger = logging.getLogger("elmo_experiments")

MIN_COLUMNS = WORD_COLUMN + 2  # document, part, word number, word, ..., coreference
LAYOUT = "document, part, word number, word, ..., coreference last"
NO_MENTION = ("", "-", "_")  # LitBank leaves the column empty, OntoNotes writes "-"
NO_SPEAKER = "_"  # LitBank's placeholder columns
SPEAKER_MIN_COLUMNS = 12  # 11 fixed columns (the 10th the speaker), coreference
SPLIT_SELECTOR = "#"
SPLIT_FILE = "split.json"
_PIECE = re.compile(r"\((\w+)\)|\((\w+)|(\w+)\)")  # "(7)", "(7", "7)"

Span = tuple[int, int]


@dataclass
class _Mention:
    """An open mention: its first token, that token's sentence and line."""

    start: int
    sentence: int
    line: int


def parse_clusters(part: Part, path: Path) -> list[list[Span]]:
    """The gold clusters of a part from its last column (token indices over the part), each
    sorted, ordered by first mention. A close without an open, a mention left open at the
    part's end or crossing a sentence, and a malformed cell are one-line ``DataError``s."""
    open_mentions: dict[str, list[_Mention]] = defaultdict(list)  # a stack per cluster id
    clusters: dict[str, set[Span]] = defaultdict(set)
    token = 0
    for sentence, rows in enumerate(part.sentences):
        for line, fields in rows:
            cell = fields[-1].strip()
            if cell not in NO_MENTION:
                for piece in cell.split("|"):
                    _piece(piece, cell, token, sentence, line, open_mentions, clusters, path)
            token += 1
    left = [(m.line, cluster) for cluster, stack in open_mentions.items() for m in stack]
    if left:
        line, cluster = min(left)
        raise DataError(f"{path}:{line}: coreference '({cluster}' is never closed (its "
                        f"document part ends at line {part.end_line})")
    return sorted(sorted(spans) for spans in clusters.values())


def _piece(piece: str, cell: str, token: int, sentence: int, line: int,
           open_mentions: dict[str, list[_Mention]], clusters: dict[str, set[Span]],
           path: Path) -> None:
    """One ``|``-separated part of a coreference cell: open, close, or a one-token mention."""
    match = _PIECE.fullmatch(piece)
    if match is None:
        raise DataError(f"{path}:{line}: coreference column {cell!r}: {piece!r} is not '(id', "
                        f"'id)' or '(id)' (cells are '-' or such parts joined by '|')")
    single, opened, closed = match.groups()
    if single is not None:
        clusters[single].add((token, token))
    elif opened is not None:
        open_mentions[opened].append(_Mention(token, sentence, line))
    else:
        if not open_mentions[closed]:
            raise DataError(f"{path}:{line}: coreference '{closed})' closes no open mention of "
                            f"cluster {closed}")
        mention = open_mentions[closed].pop()
        if mention.sentence != sentence:
            raise DataError(f"{path}:{line}: coreference '{closed})' closes a mention opened at "
                            f"line {mention.line}, in an earlier sentence: mentions lie within "
                            f"a sentence")
        clusters[closed].add((mention.start, token))


def split_documents(split_file: str | Path, split: str) -> list[str]:
    """The file names a split file (``{"train": [names], "dev": [...], ...}``) lists under
    ``split``; other keys (LitBank's ``description``, ``counts``) are ignored."""
    value = read_json(split_file)
    names = value.get(split)
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        splits = [k for k, v in value.items() if isinstance(v, list)]
        raise DataError(f"{split_file}: no split {split!r} (a list of file names); it has "
                        f"{', '.join(map(repr, splits)) or 'none'}")
    return names


def _default_split_file(folder: Path) -> Path:
    """``split.json`` in the folder, else beside it (LitBank: ``coref_litbank/split.json``
    beside ``coref_litbank/conll``)."""
    for candidate in (folder / SPLIT_FILE, folder.parent / SPLIT_FILE):
        if candidate.is_file():
            return candidate
    raise DataError(f"{folder}: no {SPLIT_FILE} in it or beside it to choose a split from "
                    f"(give dataset_reader.documents.split_file)")


def data_files(path: str | Path, documents: list[str] | dict[str, str] | None = None
               ) -> list[Path]:
    """The files a data path names (see the module docstring), restricted by ``documents``: a
    list of file names in the folder, or ``{"split_file": ..., "split": ...}`` (without
    ``split``, the path's ``#SPLIT`` chooses it). Listed documents keep the list's order."""
    text = str(path)
    split = None
    if SPLIT_SELECTOR in text and not Path(text).expanduser().exists():
        text, split = text.rsplit(SPLIT_SELECTOR, 1)
        if not split:
            raise DataError(f"{path}: nothing after '{SPLIT_SELECTOR}' (FOLDER#SPLIT)")
    base = Path(text).expanduser()
    names = _listed(path, base, split, documents)
    if names is not None:
        if not base.is_dir():
            raise DataError(f"{path}: choosing documents needs a folder, not {base}")
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise DataError(f"{path}: documents listed twice: {', '.join(repeated[:3])}")
        try:
            return [resolve_data_path(base / name) for name in names]
        except DataError as error:
            raise DataError(f"{path}: a listed document is missing: {error}") from None
    if base.is_dir():
        files = sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")
                       and p.name.removesuffix(".gz").endswith("conll"))
    elif any(ch in text for ch in "*?["):
        files = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    else:
        return [resolve_data_path(base)]
    if not files:
        raise DataError(f"{path}: no CoNLL files found (a folder reads its *conll and "
                        f"*conll.gz files)")
    return files


def _listed(path: str | Path, base: Path, split: str | None,
            documents: list[str] | dict[str, str] | None) -> list[str] | None:
    """The document names ``documents`` and the path's ``#SPLIT`` choose, or None for all."""
    if isinstance(documents, list):
        if split is not None:
            raise DataError(f"{path}: '#{split}' chooses a split, but dataset_reader.documents "
                            f"already lists the documents")
        return documents
    chosen = documents.get("split") if documents else None
    if chosen is not None and split is not None and chosen != split:
        raise DataError(f"{path}: '#{split}' chooses a split, but dataset_reader.documents "
                        f"chooses {chosen!r}")
    split = split or chosen
    if split is None:
        return None
    split_file = Path(documents["split_file"]).expanduser() if documents \
        else _default_split_file(base)
    return split_documents(split_file, split)


def documents_problem(value: Any) -> str | None:
    """A ``Param.check`` for ``documents``: a list of file names, or ``{split_file, split}``."""
    if isinstance(value, list):
        if not value or not all(isinstance(n, str) and n for n in value):
            return "expected a non-empty list of file names"
        return None
    unknown = sorted(set(value) - {"split_file", "split"})
    if unknown or not isinstance(value.get("split_file"), str) or not all(
            isinstance(value.get(k), str) and value[k] for k in value):
        return (f"expected {{split_file: PATH, split: NAME}} (split optional), got "
                f"{value!r}")
    return None


class CorefReader:
    """CoNLL-2012 coreference: one instance per document part (see the module docstring).

    ``max_sentences``: cut a longer part into consecutive windows of at most that many
    sentences, each keeping the mentions inside it (for training; evaluate on whole parts).
    ``documents``: which files of a folder to read (see ``data_files``). ``unescape``: words as
    text (``-LRB-`` -> ``(``, ``/.`` -> ``.``); false keeps the file's words.
    """

    def __init__(
        self,
        token_indexers: TokenIndexers,
        # training: cut longer document parts into windows of at most N sentences
        max_sentences: Annotated[int | None, Bounds(*AT_LEAST_ONE)] = None,
        # a list of file names, or {split_file, split}; a data path FOLDER#SPLIT chooses the
        # split from FOLDER's split.json
        documents: Annotated[list[str] | dict[str, str] | None,
                             Check(documents_problem)] = None,
        unescape: bool = True,  # words as text: -LRB- -> (, OntoNotes' /. -> . ; false: as is
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()}
        self.max_sentences = max_sentences
        self.documents = documents
        self.unescape = unescape
        self.fields = {"document": ListTextField(self.token_indexers),
                       **{name: MetadataField() for name in (
                           "clusters", "document_id", "part", "speakers", "genre",
                           "sentence_offsets", "window")}}

    def files(self, path: str | Path) -> list[Path]:
        """The files ``path`` names, in reading order (the run's provenance hashes them)."""
        return data_files(path, self.documents)

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        """Every part of every file ``path`` names (in order), as instances."""
        files = self.files(path)
        instances: list[dict[str, Any]] = []
        documents: set[str] = set()
        counts = dict.fromkeys(("parts", "sentences", "tokens", "mentions", "clusters",
                                "singletons"), 0)
        for file in files:
            for part in iter_parts(file, MIN_COLUMNS, LAYOUT, MAX_LINE_BYTES):
                instance = self._instance(part, file)
                documents.add(instance["document_id"])
                clusters = instance["clusters"]
                counts["parts"] += 1
                counts["sentences"] += len(instance["document"])
                counts["tokens"] += sum(len(s) for s in instance["document"])
                counts["mentions"] += sum(len(c) for c in clusters)
                counts["clusters"] += len(clusters)
                counts["singletons"] += sum(len(c) == 1 for c in clusters)
                instances += self._windows(instance)
        if not instances:
            raise DataError(f"{path}: no document parts found")
        windows = f" (windows of at most {self.max_sentences} sentences)" \
            if self.max_sentences else ""
        logger.info("%s: %s files, %s documents, %s parts, %s instances%s, %s sentences, %s "
                    "tokens, %s mentions, %s clusters (%s singletons)", path, f"{len(files):,}",
                    f"{len(documents):,}", f"{counts['parts']:,}", f"{len(instances):,}",
                    windows, *(f"{counts[k]:,}" for k in (
                        "sentences", "tokens", "mentions", "clusters", "singletons")))
        return instances

    def text_to_instance(self, sentences: list[list[str]], document_id: str = "input",
                         speakers: list[list[str]] | None = None) -> dict[str, Any]:
        """An instance of tokenised sentences without gold clusters (``clusters`` None)."""
        if not sentences or not all(sentences):
            raise DataError("a document needs at least one sentence, and no empty sentence")
        return {"document": sentences, "clusters": None, "document_id": document_id,
                "part": None, "speakers": speakers, "genre": _genre(document_id),
                "sentence_offsets": _offsets(sentences), "window": None}

    def _instance(self, part: Part, path: Path) -> dict[str, Any]:
        """A whole part as an instance."""
        if not part.sentences:
            raise DataError(f"{path}:{part.begin_line}: document {part.header!r} has no "
                            f"sentences")
        for rows in part.sentences:
            _check_columns(rows, path)
        words = [[fields[WORD_COLUMN] for _, fields in rows] for rows in part.sentences]
        if self.unescape:
            words = [[unescape_word(w) for w in sentence] for sentence in words]
        return {"document": words,
                "clusters": [[list(span) for span in spans]
                             for spans in parse_clusters(part, path)],
                "document_id": part.document, "part": part.part,
                "speakers": _speakers(part), "genre": _genre(part.document),
                "sentence_offsets": _offsets(words), "window": None}

    def _windows(self, instance: dict[str, Any]) -> list[dict[str, Any]]:
        """The part itself, or its windows of at most ``max_sentences`` sentences."""
        size, sentences = self.max_sentences, instance["document"]
        if size is None or len(sentences) <= size:
            return [instance]
        starts = range(0, len(sentences), size)
        windows = []
        for index, first in enumerate(starts):
            words = sentences[first:first + size]
            begin = instance["sentence_offsets"][first]
            end = begin + sum(len(s) for s in words)
            clusters = [[[s - begin, e - begin] for s, e in cluster if begin <= s and e < end]
                        for cluster in instance["clusters"]]
            speakers = instance["speakers"]
            windows.append({
                **instance, "document": words,
                "clusters": sorted(c for c in clusters if c),
                "speakers": speakers[first:first + size] if speakers is not None else None,
                "sentence_offsets": _offsets(words),
                "window": {"index": index, "first_sentence": first, "first_token": begin,
                           "windows": len(starts)}})
        return windows


def _check_columns(rows: list[Row], path: Path) -> None:
    """Every row of a sentence has its first row's column count."""
    first_line, first = rows[0]
    for line, fields in rows:
        if len(fields) != len(first):
            raise DataError(f"{path}:{line}: {len(fields)} columns, but the sentence's first "
                            f"row (line {first_line}) has {len(first)}")


def _speakers(part: Part) -> list[list[str]] | None:
    """The speaker column per sentence and token; None where the layout has none (fewer
    columns, or LitBank's ``_`` throughout)."""
    speakers = [[fields[SPEAKER_COLUMN] if len(fields) >= SPEAKER_MIN_COLUMNS else NO_SPEAKER
                 for _, fields in rows] for rows in part.sentences]
    if all(s == NO_SPEAKER for sentence in speakers for s in sentence):
        return None
    return speakers


def _genre(document_id: str) -> str | None:
    """OntoNotes' genre, the id's first component (``bc`` of ``bc/cctv/00/cctv_0000``)."""
    return document_id.split("/", 1)[0] if "/" in document_id else None


def _offsets(sentences: list[list[str]]) -> list[int]:
    offsets, total = [], 0
    for sentence in sentences:
        offsets.append(total)
        total += len(sentence)
    return offsets


register("dataset_reader", "coref_conll2012")(CorefReader)
