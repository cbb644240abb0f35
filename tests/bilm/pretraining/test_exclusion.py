"""Excluding held-out documents (LitBank's excerpts) from raw training text."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.bilm.pretraining.corpus import prepare_corpus, read_sentences
from elmo_experiments.data.readers.conll2012_text import iter_documents
from elmo_experiments.errors import DataError

NOVEL = """CHAPTER I

It was a dark and stormy night; the rain fell in
torrents. "Except at occasional intervals," said he.

Then the wind rose, and the house-tops rattled.
Nobody slept.

CHAPTER II

Morning came late.
"""


def conll(name: str, sentences: list[list[str]]) -> str:
    lines = [f"#begin document ({name}); part 0"]
    for sentence in sentences:
        lines += [f"{name}\t0\t{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\t_" for i, w in enumerate(sentence)]
        lines.append("")
    return "\n".join([*lines, "#end document", ""])


EXCERPT = [["It", "was", "a", "dark", "and", "stormy", "night", ";", "the", "rain", "fell", "in",
            "torrents", "."], ['"', "Except", "at", "occasional", "intervals", ",", '"', "said",
                               "he", "."], ["Then", "the", "wind", "rose", ","]]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "novels").mkdir()
    (tmp_path / "novels" / "one.txt").write_text(NOVEL)
    (tmp_path / "novels" / "two.txt").write_text("Another book.\n\nWith nothing to cut.\n")
    (tmp_path / "excerpts").mkdir()
    (tmp_path / "excerpts" / "one.conll").write_text(conll("one", EXCERPT))
    return {"novels": tmp_path / "novels", "excerpts": tmp_path / "excerpts"}


def test_conll2012_documents_and_their_words(files: dict[str, Path]) -> None:
    [(name, sentences)] = list(iter_documents(files["excerpts"] / "one.conll"))
    assert name == "(one); part 0" and sentences == EXCERPT


def test_the_excerpt_is_cut_whatever_its_tokenisation_and_wrapping(files) -> None:
    report: dict = {}
    words = [w for s in read_sentences(str(files["novels"]), "raw", str(files["excerpts"]),
                                       report) for w in s]
    text = " ".join(words)
    assert "stormy" not in text and "Except" not in text and "wind" not in text
    # what follows the cut (same paragraph) and the rest of the novel stay
    assert "the house - tops rattled ." in text or "the house-tops rattled ." in text
    assert "Morning came late ." in text and "CHAPTER I" in text and "Another book ." in text
    assert report[str(files["novels"])]["documents"] == 1
    assert report[str(files["novels"])]["characters"] > 60


def test_an_excerpt_not_found_stops_preparation(files, tmp_path: Path) -> None:
    (files["excerpts"] / "two.conll").write_text(conll("lost", [["Not", "in", "any", "novel"]]))
    with pytest.raises(DataError, match=r"excluded documents not found in its text: .lost."):
        list(read_sentences(str(files["novels"]), "raw", str(files["excerpts"])))


def test_an_excerpt_found_twice_stops_preparation(files) -> None:
    (files["novels"] / "copy.txt").write_text(NOVEL)
    with pytest.raises(DataError, match="also occurs in"):
        list(read_sentences(str(files["novels"]), "raw", str(files["excerpts"])))


def test_exclude_needs_raw_text(files) -> None:
    with pytest.raises(DataError, match="'exclude' needs format raw"):
        list(read_sentences(str(files["novels"]), "tokenized", str(files["excerpts"])))


def test_prepared_corpus_records_the_exclusion_and_scores_the_excerpt(files, tmp_path) -> None:
    corpus = prepare_corpus(
        [{"path": str(files["novels"]), "format": "raw", "exclude": str(files["excerpts"])}],
        {"excerpts": {"path": str(files["excerpts"]), "format": "conll2012"}},
        tmp_path / "prepared", heldout_every=0)
    words = {corpus.types[i] for i in corpus.ids("train") if i >= 0}
    assert "stormy" not in words and "Morning" in words
    excerpt = [corpus.types[i] for i in corpus.ids("excerpts") if i >= 0]
    assert excerpt == [w for s in EXCERPT for w in s]


def test_malformed_conll2012_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.conll"
    bad.write_text("#begin document (x); part 0\nx\t0\n#end document\n")
    with pytest.raises(DataError, match=r"bad\.conll:2: expected at least 4 columns"):
        list(iter_documents(bad))
    bad.write_text("#begin document (x); part 0\nx\t0\t0\tword\n")
    with pytest.raises(DataError, match="has no '#end document' line"):
        list(iter_documents(bad))
