"""The SST reader: tree parsing, phrase options, labels, malformed input, the real data."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.sst5.reader import SstReader, parse_tree

TREE = "(3 (2 (2 The) (2 film)) (4 (3 (2 is) (4 superb)) (2 .)))"
SAMPLE = PROJECT_ROOT / "reproduction" / "sst5" / "sample"
REAL = Path(os.environ.get("ELMO_DATA_DIR", "no-data")) / "sst"


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "trees.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_parse_tree_lists_every_phrase_root_first() -> None:
    phrases = [(p.label, " ".join(p.tokens)) for p in parse_tree(TREE)]
    assert phrases == [
        ("3", "The film is superb ."), ("2", "The film"), ("2", "The"), ("2", "film"),
        ("4", "is superb ."), ("3", "is superb"), ("2", "is"), ("4", "superb"), ("2", "."),
    ]


def test_words_may_hold_brackets_escaped_and_odd_characters() -> None:
    phrases = parse_tree("(2 (2 -LRB-) (1 (2 `` ) (2 Jean-Claud's)))")
    assert phrases[0].tokens == ["(", "``", "Jean-Claud's"]  # bracket escapes unescaped


@pytest.mark.parametrize("text,message", [
    ("(3 (2 The) (2 film)", "not closed"),
    ("(3 (2 The)) (2 film))", "after the tree's end"),
    ("(7 (2 The) (2 film))", "label '7'"),
    ("(3 (2 The) (2))", "empty node"),
    ("The (2 film)", "word outside a node"),
    (")", "unbalanced ')'"),
])
def test_malformed_trees(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_tree(text)


def test_roots_only_by_default(tmp_path: Path) -> None:
    instances = SstReader({}).read(write(tmp_path, TREE, "", "(1 (1 Dull) (2 .))"))
    assert instances == [
        {"tokens": ["The", "film", "is", "superb", "."], "label": "3"},
        {"tokens": ["Dull", "."], "label": "1"},
    ]


def test_subtrees_with_a_minimum_length_keep_the_root(tmp_path: Path) -> None:
    path = write(tmp_path, TREE, "(1 (1 Dull) (2 .))")
    every = SstReader({}, use_subtrees=True).read(path)
    assert len(every) == 9 + 3
    long = SstReader({}, use_subtrees=True, min_phrase_length=3).read(path)
    assert [(i["label"], len(i["tokens"])) for i in long] == [("3", 5), ("4", 3), ("1", 2)]


def test_binary_labels_drop_neutral(tmp_path: Path) -> None:
    path = write(tmp_path, TREE, "(2 (2 So) (2 so))", "(0 (0 Awful) (2 .))")
    labels = [i["label"] for i in SstReader({}, binary=True).read(path)]
    assert labels == ["positive", "negative"]
    phrases = SstReader({}, binary=True, use_subtrees=True).read(path)
    assert Counter(i["label"] for i in phrases) == {"positive": 4, "negative": 2}


def test_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, TREE, "(3 (2 The) (2 film)")
    with pytest.raises(DataError, match=rf"{path}:2: malformed sentiment tree: .*not closed"):
        SstReader({}).read(path)


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no sentiment trees"):
        SstReader({}).read(write(tmp_path, "", " "))


def test_binary_file_without_polar_sentences_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "(2 (2 So) (2 so))")
    with pytest.raises(DataError) as info:
        SstReader({}, binary=True).read(path)
    assert str(info.value) == (f"{path}: no sentiment trees found (1 phrase read, 1 dropped "
                               f"(1 neutral (label 2, left out by binary)))")


def test_the_embedded_sample_reads() -> None:
    for split in ("train", "dev", "test"):
        instances = SstReader({}).read(SAMPLE / f"{split}.txt")
        assert len(instances) == {"train": 160, "dev": 40, "test": 40}[split]
        assert {i["label"] for i in instances} <= {"0", "1", "2", "3", "4"}


@pytest.mark.skipif(not REAL.is_dir(), reason="the real SST data is not on this machine")
def test_real_sst_matches_the_official_counts() -> None:
    roots = {split: SstReader({}).read(REAL / f"{split}.txt") for split in ("train", "dev", "test")}
    assert {k: len(v) for k, v in roots.items()} == {"train": 8544, "dev": 1101, "test": 2210}
    assert Counter(i["label"] for i in roots["dev"]) == {
        "0": 139, "1": 289, "2": 229, "3": 279, "4": 165}
    phrases = SstReader({}, use_subtrees=True, min_phrase_length=4).read(REAL / "train.txt")
    sentences = {tuple(i["tokens"]) for i in roots["train"]}
    assert len(phrases) > 10 * 8544
    assert all(len(i["tokens"]) >= 4 or tuple(i["tokens"]) in sentences for i in phrases)
    binary = SstReader({}, binary=True).read(REAL / "test.txt")
    assert len(binary) == 1821  # SST-2 test: 2210 minus 389 neutral
