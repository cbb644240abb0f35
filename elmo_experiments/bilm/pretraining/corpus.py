"""Corpora for biLM pretraining, streamed once into token-id arrays on disk.

Formats: ``tokenized`` (one sentence per line, whitespace tokens: PTB, WikiText, our samples),
``raw`` (running text, paragraphs split by blank lines, tokenised and split into sentences with
the same spaCy rules as ``elmo-exp predict --text``: those of the source's ``language``, default
``en``), ``brown`` (the NLTK Brown zip, word/TAG tokens), ``conll`` (a task's column files:
first column, labels ignored; for domain fine-tuning), ``conll2012`` (CoNLL-2012 documents: the
words of column 4, e.g. LitBank),
``experiment`` (a task's text as its experiment config reads it: ``path`` is the config, ``split``
its train, validation or test data, ``ext_vars`` its ext vars; ``experiment_text.py``). Paths
may be files, folders or globs; ``.gz`` files are read transparently. A ``raw`` source may name
CoNLL-2012 documents to ``exclude``: their text is cut out before tokenisation
(``exclusion.py``), so that a test set stays unseen.
"""

from __future__ import annotations

import glob
import json
import logging
import zipfile
import zlib
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elmo_experiments.bilm.pretraining.exclusion import Exclusions
from elmo_experiments.config.registry import Param
from elmo_experiments.data.files import (
    atomic_write_text,
    iter_lines,
    read_json,
    read_lines,
    save_array,
    write_error,
    write_lines,
)
from elmo_experiments.data.languages import DEFAULT_LANGUAGE, LANGUAGE_PARAM
from elmo_experiments.errors import DataError
from elmo_experiments.faults import fault_point

logger = logging.getLogger("elmo_experiments")

FORMATS = ("tokenized", "raw", "brown", "conll", "conllu", "conll2012", "experiment")
SOURCE_PARAMS = (
    Param("path", str, doc="file, folder or glob; for format experiment, a task config"),
    Param("format", str, "tokenized", choices=FORMATS),
    Param("exclude", str, None, doc="CoNLL-2012 documents (file, folder or glob) cut out of "
          "this raw text before training"),
    Param("split", str, "train", choices=("train", "validation", "test"),
          doc="format experiment: which of the config's data paths to read"),
    Param("ext_vars", dict, {}, doc="format experiment: ext vars for the config (e.g. "
          "ELMO_SIZE: 'cpu')"),
    LANGUAGE_PARAM,
    Param("reader", str, None, choices=("training", "evaluation"),
          doc="format experiment: which of the config's readers reads the split (default: the "
          "training reader for train, else the evaluation reader)"),
)
SEPARATOR = -1  # between sentences in an id array


def expand(path: str) -> list[Path]:
    """The files a path, folder or glob names, sorted; an error if there are none. A file or
    folder that exists is read as named, even with glob characters in its name
    (``file[1].txt``)."""
    candidate = Path(path).expanduser()
    if candidate.is_dir():
        files = sorted(p for p in candidate.rglob("*") if p.is_file())
    elif candidate.is_file() or candidate.with_name(candidate.name + ".gz").is_file():
        files = [candidate]
    elif any(ch in path for ch in "*?["):
        files = sorted(Path(p) for p in glob.glob(path, recursive=True) if Path(p).is_file())
    else:
        files = []
    if not files:
        raise DataError(f"{path}: no corpus files found")
    return files


def _tokenized(path: Path) -> Iterator[list[str]]:
    for _, line in iter_lines(path, any_nul=True):  # a NUL is never part of a word
        tokens = line.split()
        if tokens:
            yield tokens


def _raw(path: Path, exclusions: Exclusions | None = None,
         language: str = DEFAULT_LANGUAGE) -> Iterator[list[str]]:
    from elmo_experiments.data.tokenizers import split_sentences

    lines = [line for _, line in iter_lines(path, any_nul=True)]
    if exclusions is not None:
        lines = exclusions.cut("".join(lines), str(path)).splitlines()
    paragraph: list[str] = []
    for line in lines:
        if line.strip():
            paragraph.append(line.strip())
            continue
        if paragraph:
            yield from split_sentences(" ".join(paragraph), language)
            paragraph = []
    if paragraph:
        yield from split_sentences(" ".join(paragraph), language)


def _brown(path: Path) -> Iterator[list[str]]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise DataError(f"{path}: not a zip file (format brown)") from None
    with archive:
        for name in sorted(archive.namelist()):
            stem = name.rsplit("/", 1)[-1]
            if len(stem) != 4 or not stem[:2].isalpha() or not stem[2:].isdigit():
                continue  # texts are named like ca01; skip README, cats.txt
            try:
                data = archive.read(name)
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as error:
                raise DataError(f"{path}:{name}: cannot read it ({error})") from None
            for line in _member_text(path, name, data).splitlines():
                tokens = [t.rsplit("/", 1)[0] for t in line.split()]
                if tokens:
                    yield tokens


def _member_text(path: Path, name: str, data: bytes) -> str:
    """An archive member's UTF-8 text; bytes that are not UTF-8, or a NUL byte, are a one-line
    ``DataError`` naming the archive, the member and the line."""

    def place(offset: int) -> tuple[str, int]:  # "ARCHIVE:MEMBER:LINE", the column
        line = data.count(b"\n", 0, offset) + 1
        return f"{path}:{name}:{line}", offset - data.rfind(b"\n", 0, offset)

    if 0 in data:
        where, _ = place(data.index(0))
        raise DataError(f"{where}: NUL bytes, not text (a binary or damaged file, or UTF-16?)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        where, column = place(error.start)
        raise DataError(f"{where}: not UTF-8 text (byte {data[error.start]:#04x} at column "
                        f"{column})") from None


def _conll(path: Path) -> Iterator[list[str]]:
    """The first column of CoNLL-style files. Every token line of a sentence has as many
    columns as its first (a token and its tags; CoNLL-2005 has a column a predicate, so the
    count may change from sentence to sentence): running text, whose lines hold varying
    numbers of words, is refused rather than read as its lines' first words."""
    from elmo_experiments.data.readers.column_tagging import iter_rows

    for rows in iter_rows(path):
        first = (rows[0][0], len(rows[0][1]))  # (line, columns) of the sentence's first line
        for number, fields in rows:
            if len(fields) != first[1]:
                raise DataError(
                    f"{path}:{number}: {len(fields)} columns, but line {first[0]} has "
                    f"{first[1]}: CoNLL has a token and its tags on each line, the same "
                    f"number on every line of a sentence (running text? use format raw or "
                    f"tokenized)")
        yield [fields[0] for _, fields in rows]


def _conllu(path: Path) -> Iterator[list[str]]:
    from elmo_experiments.data.readers.conllu import FORM, iter_conllu

    for rows in iter_conllu(path):
        yield [fields[FORM] for fields in rows]


def _conll2012(path: Path) -> Iterator[list[str]]:
    from elmo_experiments.data.readers.conll2012_text import iter_documents

    for _, sentences in iter_documents(path):
        yield from sentences


READERS = {"tokenized": _tokenized, "raw": _raw, "brown": _brown, "conll": _conll,
           "conllu": _conllu, "conll2012": _conll2012}


def read_source(source: dict[str, Any], report: dict[str, Any] | None = None
                ) -> Iterator[list[str]]:
    """The sentences of one corpus source (a ``SOURCE_PARAMS`` dict)."""
    if source.get("format") == "experiment":
        from elmo_experiments.experiment_text import experiment_sentences

        yield from experiment_sentences(source["path"], source.get("split") or "train",
                                        source.get("ext_vars") or {}, source.get("reader"))
        return
    yield from read_sentences(source["path"], source.get("format") or "tokenized",
                              source.get("exclude"), report,
                              source.get("language") or DEFAULT_LANGUAGE)


def read_sentences(path: str, fmt: str, exclude: str | None = None,
                   report: dict[str, Any] | None = None, language: str = DEFAULT_LANGUAGE
                   ) -> Iterator[list[str]]:
    """Sentences (token lists) of every file ``path`` names, in sorted file order; with
    ``exclude`` (raw text only), those documents cut out first, and noted in ``report``.
    ``language``: the spaCy rules raw text is tokenised with (other formats are tokenised)."""
    if fmt == "experiment":
        raise DataError(f"{path}: format experiment is read with read_source")
    if exclude is None:
        for file in expand(path):
            yield from (_raw(file, language=language) if fmt == "raw" else READERS[fmt](file))
        return
    if fmt != "raw":
        raise DataError(f"{path}: 'exclude' needs format raw, not {fmt}")
    exclusions = Exclusions.from_conll2012(expand(exclude))
    for file in expand(path):
        yield from _raw(file, exclusions, language)
    exclusions.check_all_found(path)
    if report is not None:
        report[path] = {"documents": len(exclusions.found),
                        "characters": sum(n for _, n in exclusions.found.values())}


def check_heldout(corpus: PreparedCorpus, settings: dict[str, Any]) -> None:
    """A run selects its best epoch on the heldout split: an empty one is a one-line
    ``DataError`` naming the training sources and ``corpus.heldout_every`` (``settings``: the
    config's ``corpus``), which the dry run reports as the run does."""
    heldout = np.asarray(corpus.ids("heldout"))
    if (heldout >= 0).any():
        return
    sentences = int((np.asarray(corpus.ids("train")) == SEPARATOR).sum())
    paths = ", ".join(str(source["path"]) for source in settings["train"])
    raise DataError(f"corpus.heldout_every: {settings['heldout_every']} holds out none of the "
                    f"{sentences} training sentences of {paths}, and model selection needs "
                    f"held-out sentences; lower it, or give more text")


@dataclass
class PreparedCorpus:
    """Token-id arrays on disk: ``split.npy`` per split (-1 between sentences), ``types.txt``."""

    directory: Path
    types: list[str]
    counts: np.ndarray  # training-split count per type

    def ids(self, split: str) -> np.ndarray:
        path = self.directory / f"{split}.npy"
        if not path.is_file():
            raise DataError(f"{path}: split {split!r} was not prepared")
        return _array(path, mmap=True)

    def splits(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.npy") if p.stem != "counts")

    @classmethod
    def load(cls, directory: str | Path) -> PreparedCorpus:
        directory = Path(directory)
        if not (directory / "types.txt").is_file():
            raise DataError(f"{directory}: not a prepared corpus (no types.txt)")
        types = read_lines(directory / "types.txt")
        return cls(directory, types, _array(directory / "counts.npy"))


def _array(path: Path, mmap: bool = False) -> np.ndarray:
    """A prepared corpus's ``.npy`` file; a missing or damaged one is a one-line
    ``DataError`` naming it."""
    try:
        return np.load(path, mmap_mode="r" if mmap else None)
    except FileNotFoundError:
        raise DataError(f"{path}: missing; remove {path.parent} to prepare the corpus "
                        f"again") from None
    except (ValueError, OSError, EOFError) as error:  # a bad header, a truncated array
        raise DataError(f"{path}: damaged ({error}); remove {path.parent} to prepare the "
                        f"corpus again") from None


FINGERPRINT = "fingerprint.json"  # written last: marks a complete preparation
MANIFEST = "manifest.json"  # the size of every file prepared, checked at each load
OWNER = ".elmo-prepared-corpus"  # written first: the folder is a (possibly unfinished) corpus


def damaged_files(directory: Path) -> list[str]:
    """Files of a prepared corpus whose size differs from its manifest (truncated, missing);
    empty for a corpus prepared before manifests were written."""
    manifest = directory / MANIFEST
    if not manifest.is_file():
        return []
    sizes = read_prepared_json(manifest)
    return [name for name, size in sizes.items()
            if not (directory / name).is_file() or (directory / name).stat().st_size != size]


def read_prepared_json(path: Path) -> dict[str, Any]:
    """One of a prepared corpus's JSON files (fingerprint, manifest, summary); a damaged one
    is a one-line ``DataError`` naming it (and the line), and how to prepare the corpus anew."""
    try:
        return read_json(path)
    except DataError as error:
        raise DataError(f"{error}; remove {path.parent} to prepare the corpus again"
                        ) from None


def fingerprint(train: list[dict[str, str]], evaluation: dict[str, dict[str, str]],
                heldout_every: int, max_sentence_length: int) -> dict[str, Any]:
    """What a prepared corpus was made from: sources (files and sizes) and settings."""

    def files(source: dict[str, Any]) -> list[list[Any]]:
        paths = expand(source["path"])
        if source.get("format") == "experiment":  # the config and the data it reads
            from elmo_experiments.experiment_text import split_data_path

            data = split_data_path(source["path"], source.get("split") or "train",
                                   source.get("ext_vars") or {})
            paths = paths + expand(data.split("#")[0])
        return [[str(f.resolve()), f.stat().st_size] for f in paths if f.exists()]

    def excluded(source: dict[str, str]) -> dict[str, Any]:
        if not source.get("exclude"):
            return {}
        return {"excluded_files": files({"path": source["exclude"]})}

    def settings(source: dict[str, Any]) -> dict[str, Any]:  # English: as before languages
        return {k: v for k, v in source.items()
                if not (k == "language" and v in (None, DEFAULT_LANGUAGE))}

    return {"train": [{**settings(s), "files": files(s), **excluded(s)} for s in train],
            "evaluation": {n: {**settings(s), "files": files(s)}
                           for n, s in sorted(evaluation.items())},
            "heldout_every": heldout_every, "max_sentence_length": max_sentence_length}


def load_or_prepare(train: list[dict[str, str]], evaluation: dict[str, dict[str, str]],
                    directory: str | Path, heldout_every: int = 100,
                    max_sentence_length: int = 100) -> PreparedCorpus:
    """The prepared corpus in ``directory`` if it was made from these sources and settings;
    prepared now if the directory holds none (or an unfinished one); an error otherwise."""
    directory = Path(directory)
    wanted = fingerprint(train, evaluation, heldout_every, max_sentence_length)
    marker = directory / FINGERPRINT
    if marker.is_file():
        if read_prepared_json(marker) != json.loads(json.dumps(wanted)):
            raise DataError(f"{directory}: prepared from other sources or settings; remove it "
                            "or choose another corpus.prepared_dir")
        damaged = damaged_files(directory)
        if not damaged:
            return PreparedCorpus.load(directory)
        logger.warning("%s: %s damaged (its size changed since it was prepared): preparing the "
                       "corpus again", directory, ", ".join(damaged))
    corpus = prepare_corpus(train, evaluation, directory, heldout_every, max_sentence_length)
    fault_point("corpus:prepared")
    sizes = {p.name: p.stat().st_size for p in sorted(directory.iterdir())
             if p.is_file() and p.name not in (MANIFEST, FINGERPRINT, OWNER)}
    atomic_write_text(directory / MANIFEST, json.dumps(sizes, indent=1))
    atomic_write_text(marker, json.dumps(wanted, indent=1))  # last: the corpus is complete
    return corpus


def prepare_corpus(train: list[dict[str, str]], evaluation: dict[str, dict[str, str]],
                   directory: str | Path, heldout_every: int = 100,
                   max_sentence_length: int = 100) -> PreparedCorpus:
    """Stream the sources once into ``directory``: train, heldout (every n-th training
    sentence), and one array per evaluation set. Long sentences are cut into pieces."""
    directory = Path(directory)
    existing = next((p for p in (directory, *directory.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == directory else f"{existing} is "
        raise DataError(f"{directory}: {where}a file, not a folder; a prepared corpus is a "
                        f"folder (corpus.prepared_dir names a new or empty one, or one "
                        f"prepared before)")
    if directory.is_dir() and any(directory.iterdir()) and not (
            (directory / OWNER).is_file() or (directory / FINGERPRINT).is_file()):
        raise DataError(f"{directory}: not empty and not a prepared corpus; prepare corpora "
                        f"into a new or empty folder (nothing in it was changed)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # no permission, a full disk
        raise write_error(directory, error) from None
    atomic_write_text(directory / OWNER, "a prepared corpus of elmo-experiments\n")
    for stale in [*directory.glob("*.npy"), directory / FINGERPRINT, directory / MANIFEST]:
        stale.unlink(missing_ok=True)
    index: dict[str, int] = {}
    types: list[str] = []
    counts: Counter[int] = Counter()

    def encode(tokens: list[str], out: array, count: bool) -> None:
        for start in range(0, len(tokens), max_sentence_length):
            for token in tokens[start : start + max_sentence_length]:
                type_id = index.get(token)
                if type_id is None:
                    type_id = index[token] = len(types)
                    types.append(token)
                if count:
                    counts[type_id] += 1
                out.append(type_id)
            out.append(SEPARATOR)

    arrays = {"train": array("i"), "heldout": array("i")}
    number = held = 0
    excluded: dict[str, Any] = {}
    for source in train:
        for tokens in read_source(source, excluded):
            number += 1
            heldout = heldout_every > 0 and number % heldout_every == 0
            held += heldout
            encode(tokens, arrays["heldout" if heldout else "train"], count=not heldout)
    paths = ", ".join(str(source["path"]) for source in train)
    if train and number == 0:
        raise DataError(f"corpus.train: no sentences in {paths} (empty, or blank lines only): "
                        f"a biLM needs text to learn from")
    if train and held == number:
        raise DataError(f"corpus.heldout_every: {heldout_every} holds out all {number} "
                        f"sentences of {paths}, leaving none to train on")
    for name, source in evaluation.items():
        arrays[name] = array("i")
        for tokens in read_source(source):
            encode(tokens, arrays[name], count=False)
        if not arrays[name]:
            raise DataError(f"corpus.evaluation {name}: no sentences in {source['path']} "
                            f"(empty, or blank lines only): no perplexity to measure on it")
    for name, values in arrays.items():
        save_array(directory / f"{name}.npy", np.frombuffer(values, dtype=np.int32))
    write_lines(directory / "types.txt", types)
    frequency = np.zeros(len(types), dtype=np.int64)
    for type_id, count in counts.items():
        frequency[type_id] = count
    save_array(directory / "counts.npy", frequency)
    summary = {name: int((np.frombuffer(v, dtype=np.int32) >= 0).sum()) for name, v in
               arrays.items()}
    atomic_write_text(directory / "summary.json", json.dumps(
        {"tokens": summary, "types": len(types), "excluded": excluded}, indent=2))
    return PreparedCorpus(directory, types, frequency)
