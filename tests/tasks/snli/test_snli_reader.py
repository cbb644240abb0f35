"""The SNLI reader: fields, the no-consensus label, tokenisation, malformed input, real data."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.snli.reader import SnliReader, parse_tokens

SAMPLE = PROJECT_ROOT / "reproduction" / "snli" / "sample"
REAL = Path(os.environ.get("ELMO_DATA_DIR", "no-data")) / "snli"


def record(label: str = "neutral", **changes: object) -> dict:
    base = {"gold_label": label, "pairID": "p1",
            "sentence1": "A dog's toy, red.", "sentence2": "It is red.",
            "sentence1_binary_parse": "( ( A ( dog 's ) ) ( toy ( , ( red . ) ) ) )",
            "sentence2_binary_parse": "( It ( ( is red ) . ) )"}
    return {**base, **changes}


def write(tmp_path: Path, *lines: object, name: str = "pairs.jsonl") -> Path:
    path = tmp_path / name
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_parse_tokens() -> None:
    assert parse_tokens("( ( A dog ) ( is ( red . ) ) )") == ["A", "dog", "is", "red", "."]


def test_reads_pairs_and_drops_no_consensus(tmp_path: Path) -> None:
    path = write(tmp_path, record("entailment"), record("-"), "", record("contradiction"))
    instances = SnliReader({}).read(path)
    assert [i["label"] for i in instances] == ["entailment", "contradiction"]
    assert instances[0]["premise"] == ["A", "dog", "'s", "toy", ",", "red", "."]
    assert instances[0]["hypothesis"] == ["It", "is", "red", "."]


def test_gzipped_input(tmp_path: Path) -> None:
    path = write(tmp_path, record(), name="pairs.jsonl.gz")
    assert len(SnliReader({}).read(path)) == 1


def test_spacy_tokenizer_reads_the_raw_sentences(tmp_path: Path) -> None:
    instance = SnliReader({}, tokenizer="spacy").read(write(tmp_path, record()))[0]
    assert instance["premise"] == ["A", "dog", "'s", "toy", ",", "red", "."]


@pytest.mark.parametrize("line,message", [
    ("{not json", "not a JSON object"),
    ("[1, 2]", "not a JSON object"),
    (record("maybe"), "gold_label 'maybe'"),
    ({k: v for k, v in record().items() if k != "sentence2_binary_parse"},
     "'sentence2_binary_parse' is missing"),
    (record(sentence1_binary_parse=5), "'sentence1_binary_parse' is not text"),
    (record(sentence1_binary_parse="( )"), "empty premise"),
])
def test_malformed_lines_name_the_file_and_line(tmp_path: Path, line: object,
                                                message: str) -> None:
    path = write(tmp_path, record(), line)
    with pytest.raises(DataError, match=f"{path}:2: .*{message}"):
        SnliReader({}).read(path)


def test_a_deeply_nested_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, record(), "[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataError) as info:
        SnliReader({}).read(path)
    assert str(info.value) == (f"{path}:2: JSON nested too deeply to read (arrays or objects "
                               f"thousands of levels deep)")


def test_spacy_tokenizer_needs_text(tmp_path: Path) -> None:
    path = write(tmp_path, record(sentence2=None))
    with pytest.raises(DataError, match=f"{path}:1: 'sentence2' is missing"):
        SnliReader({}, tokenizer="spacy").read(path)


def test_bracket_escapes_become_brackets(tmp_path: Path) -> None:
    path = write(tmp_path, record(sentence2_binary_parse="( -LRB- ( it -RRB- ) )"))
    assert SnliReader({}).read(path)[0]["hypothesis"] == ["(", "it", ")"]


def test_a_file_without_labelled_pairs_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no labelled sentence pairs"):
        SnliReader({}).read(write(tmp_path, ""))
    path = write(tmp_path, record("-"), record("-"))
    with pytest.raises(DataError) as info:
        SnliReader({}).read(path)
    assert str(info.value) == (f"{path}: no labelled sentence pairs found (2 pairs read, 2 "
                               f"dropped (2 labelled '-' (no consensus)))")


def test_the_read_report_counts_the_pairs_left_out(tmp_path: Path) -> None:
    reader = SnliReader({})
    reader.read(write(tmp_path, record("entailment"), record("-"), "", record("neutral")))
    assert reader.read_report.describe() == "3 pairs read, 1 dropped (1 labelled '-' (no " \
                                            "consensus))"


def test_the_embedded_sample_reads() -> None:
    instances = SnliReader({}).read(SAMPLE / "train.jsonl")
    assert 140 <= len(instances) < 160  # a few no-consensus pairs are dropped
    assert set(Counter(i["label"] for i in instances)) == {"entailment", "contradiction",
                                                           "neutral"}


@pytest.mark.skipif(not REAL.is_dir(), reason="the real SNLI data is not on this machine")
def test_real_snli_counts() -> None:
    reader = SnliReader({})
    assert len(reader.read(REAL / "snli_1.0_train_1pct.jsonl.gz")) == 5498
    assert len(reader.read(REAL / "snli_1.0_dev.jsonl.gz")) == 9842
    assert len(reader.read(REAL / "snli_1.0_test.jsonl.gz")) == 9824
