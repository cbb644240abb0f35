"""CoNLL-2003 reader and data-file helpers, on small synthetic files (no real CoNLL data)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from elmo_experiments.config.validate import Validator
from elmo_experiments.data.files import (
    DATA_DIR_VARIABLE,
    is_embedded_sample,
    iter_lines,
    provenance,
    resolve_data_path,
)
from elmo_experiments.data.readers.column_tagging import iter_sentences
from elmo_experiments.data.token_indexers import CharactersIndexer, SingleIdIndexer
from elmo_experiments.errors import DataError

REPO_ROOT = Path(__file__).resolve().parents[3]
MALFORMED = Path(__file__).resolve().parents[2] / "fixtures" / "malformed_conll"
EXPECTED = json.loads((MALFORMED / "expected.json").read_text(encoding="utf-8"))

# Two documents, three sentences; IOB1 tags in the NER column (B- only between same-type chunks).
SAMPLE = """-DOCSTART- -X- O O

Velmar NNP I-NP I-PER
Quist NNP I-NP I-PER
B-met VBD I-VP O
Orla NNP I-NP I-PER
in IN I-PP O
Dunhaven NNP I-NP I-LOC
. . O O

Kestrel NNP I-NP I-ORG
Corp NNP I-NP I-ORG
Brannock NNP I-NP B-ORG
rose VBD I-VP O
-DOCSTART- -X- O O


Zeph NNP I-NP I-MISC
wins VBZ I-VP O"""  # no trailing newline on purpose


def make_reader(**params: Any) -> Any:
    config = {
        "type": "conll2003",
        "token_indexers": {
            "tokens": {"type": "single_id", "lowercase_tokens": True},
            "token_characters": {"type": "characters", "min_padding_length": 3},
        },
        **params,
    }
    validator = Validator()
    spec = validator.component(config, "dataset_reader", "dataset_reader")
    assert validator.problems == []
    return spec.build()


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    path = tmp_path / "sample.txt"
    path.write_text(SAMPLE, encoding="utf-8")
    return path


def test_reader_builds_its_token_indexers_from_the_config() -> None:
    reader = make_reader()
    assert set(reader.token_indexers) == {"tokens", "token_characters"}
    assert isinstance(reader.token_indexers["tokens"], SingleIdIndexer)
    assert reader.token_indexers["tokens"].lowercase_tokens is True
    assert isinstance(reader.token_indexers["token_characters"], CharactersIndexer)
    assert reader.token_indexers["token_characters"].min_padding_length == 3


def test_invalid_reader_config_is_reported() -> None:
    validator = Validator()
    validator.component({"type": "conll2003", "token_indexers": {}, "coding_scheme": "IOBES"},
                        "dataset_reader", "dataset_reader")
    assert any("coding_scheme" in problem for problem in validator.problems)


def test_reads_sentences_skipping_docstart_and_blank_lines(sample_file: Path) -> None:
    instances = make_reader().read(sample_file)
    assert [inst["tokens"] for inst in instances] == [
        ["Velmar", "Quist", "B-met", "Orla", "in", "Dunhaven", "."],
        ["Kestrel", "Corp", "Brannock", "rose"],
        ["Zeph", "wins"],
    ]
    assert all(len(inst["tokens"]) == len(inst["tags"]) for inst in instances)


def test_iob1_is_converted_to_bioul(sample_file: Path) -> None:
    tags = [inst["tags"] for inst in make_reader().read(sample_file)]
    assert tags == [
        ["B-PER", "L-PER", "O", "U-PER", "O", "U-LOC", "O"],
        ["B-ORG", "L-ORG", "U-ORG", "O"],
        ["U-MISC", "O"],
    ]


def test_iob1_is_converted_to_bio(sample_file: Path) -> None:
    tags = [inst["tags"] for inst in make_reader(coding_scheme="BIO").read(sample_file)]
    assert tags == [
        ["B-PER", "I-PER", "O", "B-PER", "O", "B-LOC", "O"],
        ["B-ORG", "I-ORG", "B-ORG", "O"],
        ["B-MISC", "O"],
    ]


def test_iob1_coding_scheme_keeps_the_file_tags(sample_file: Path) -> None:
    tags = [inst["tags"] for inst in make_reader(coding_scheme="IOB1").read(sample_file)]
    assert tags[1] == ["I-ORG", "I-ORG", "B-ORG", "O"]


def test_chunk_and_pos_columns(sample_file: Path) -> None:
    chunks = make_reader(tag_label="chunk").read(sample_file)
    assert chunks[0]["tags"] == ["B-NP", "L-NP", "U-VP", "U-NP", "U-PP", "U-NP", "O"]
    pos = make_reader(tag_label="pos").read(sample_file)
    assert pos[0]["tags"] == ["NNP", "NNP", "VBD", "NNP", "IN", "NNP", "."]


def test_pos_column_is_not_checked_as_chunk_tags(tmp_path: Path) -> None:
    path = tmp_path / "pos.txt"
    path.write_text("Wub X-odd I-NP O\n", encoding="utf-8")
    assert make_reader(tag_label="pos").read(path)[0]["tags"] == ["X-odd"]


def test_only_the_selected_column_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "chunk_bad.txt"
    path.write_text("Wub NN Z-NP O\n", encoding="utf-8")
    assert make_reader().read(path)[0]["tags"] == ["O"]
    with pytest.raises(DataError, match=r"chunk_bad\.txt:1: invalid chunk tag 'Z-NP'"):
        make_reader(tag_label="chunk").read(path)


def test_crlf_tabs_and_a_utf8_bom_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "windows.txt"
    text = "\ufeff-DOCSTART- -X- O O\r\n\r\nAmi\tNNP\tI-NP\tI-PER\r\nsat VBD I-VP O\r\n"
    path.write_bytes(text.encode("utf-8"))
    assert make_reader().read(path) == [{"tokens": ["Ami", "sat"], "tags": ["U-PER", "O"]}]


def test_gzipped_file_and_fallback_to_path_gz(tmp_path: Path) -> None:
    gz = tmp_path / "train.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as handle:
        handle.write(SAMPLE)
    plain = tmp_path / "train.txt"
    assert not plain.exists()
    assert resolve_data_path(plain) == gz
    reader = make_reader()
    assert reader.read(plain) == reader.read(gz)
    assert len(reader.read(plain)) == 3
    assert "".join(text for _, text in iter_lines(plain)) == SAMPLE


def test_plain_file_is_preferred_over_gz(tmp_path: Path) -> None:
    plain = tmp_path / "dev.txt"
    plain.write_text("Ulm NNP I-NP I-LOC\n", encoding="utf-8")
    with gzip.open(tmp_path / "dev.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("Other NNP I-NP I-PER\n")
    assert resolve_data_path(plain) == plain
    assert make_reader().read(plain)[0]["tokens"] == ["Ulm"]


def test_missing_file_names_the_path_and_hints_at_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere.txt"
    monkeypatch.delenv(DATA_DIR_VARIABLE, raising=False)
    with pytest.raises(DataError) as info:
        make_reader().read(missing)
    message = str(info.value)
    assert message.startswith(f"{missing}: no such data file")
    assert DATA_DIR_VARIABLE in message
    assert "\n" not in message
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(tmp_path))
    with pytest.raises(DataError) as info:
        resolve_data_path(missing)
    assert str(info.value) == f"{missing}: no such data file"


def test_a_directory_is_not_a_data_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="a folder, not a data file"):
        resolve_data_path(tmp_path)


def test_iter_sentences_reports_first_line_numbers(sample_file: Path) -> None:
    starts = [start for start, _ in iter_sentences(sample_file)]
    assert starts == [3, 11, 18]


def test_iter_lines_numbers_lines_and_strips_only_a_leading_bom(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_bytes("\ufeffa\n\ufeffb\nc".encode())
    assert list(iter_lines(path)) == [(1, "a\n"), (2, "\ufeffb\n"), (3, "c")]


def test_text_to_instance() -> None:
    reader = make_reader()
    assert reader.text_to_instance(["Hob", "ran"]) == {"tokens": ["Hob", "ran"], "tags": None}
    assert reader.text_to_instance(["Hob"], ["U-PER"])["tags"] == ["U-PER"]


def test_embedded_sample_files_read() -> None:
    sample = REPO_ROOT / "reproduction" / "ner" / "sample"
    reader = make_reader()
    for name in ("train.txt", "dev.txt", "test.txt"):
        instances = reader.read(sample / name)
        assert instances and all(len(i["tokens"]) == len(i["tags"]) for i in instances)
        assert is_embedded_sample(sample / name)


def test_is_embedded_sample(tmp_path: Path) -> None:
    assert not is_embedded_sample(tmp_path / "train.txt")
    assert is_embedded_sample(tmp_path / "reproduction" / "pos" / "sample" / "train.txt")


def test_provenance_records_size_and_sha1(
    sample_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gz = tmp_path / "dev.txt.gz"
    gz.write_bytes(gzip.compress(b"Ulm NNP I-NP I-LOC\n"))
    monkeypatch.setenv(DATA_DIR_VARIABLE, "/some/data/root")
    record = provenance({"train": str(sample_file), "validation": str(tmp_path / "dev.txt"),
                         "test": None})
    assert record["data_dir"] == "/some/data/root"
    splits = record["splits"]
    assert set(splits) == {"train", "validation"}
    data = sample_file.read_bytes()
    assert splits["train"] == {
        "path": str(sample_file.resolve()),
        "bytes": len(data),
        "sha1": hashlib.sha1(data).hexdigest(),
        "embedded_sample": False,
    }
    assert splits["validation"]["path"] == str(gz.resolve())
    assert splits["validation"]["sha1"] == hashlib.sha1(gz.read_bytes()).hexdigest()
    monkeypatch.delenv(DATA_DIR_VARIABLE)
    assert provenance({})["data_dir"] is None


# ----------------------------------------------------------------- malformed corpus


def test_malformed_corpus_is_complete() -> None:
    files = {p.name for p in MALFORMED.iterdir() if p.name != "expected.json"}
    assert files == set(EXPECTED)
    assert len(files) >= 6


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_raises_a_one_line_data_error(name: str) -> None:
    with pytest.raises(DataError) as info:
        make_reader().read(MALFORMED / name)
    message = str(info.value)
    assert "\n" not in message
    assert EXPECTED[name] in message
    assert message.startswith(str(MALFORMED / name))


def test_gz_fallback_names_the_gz_file_in_errors() -> None:
    with pytest.raises(DataError) as info:
        make_reader().read(MALFORMED / "bad_line.txt")
    assert EXPECTED["bad_line.txt.gz"] in str(info.value)


def test_cli_train_on_a_malformed_file_prints_one_error_line(tmp_path: Path) -> None:
    bad = MALFORMED / "five_columns.txt"
    env = {k: v for k, v in os.environ.items() if k != DATA_DIR_VARIABLE}
    result = subprocess.run(
        [sys.executable, "-c", "from elmo_experiments.cli import main; main()", "train",
         "experiments/ner_baseline.jsonnet", "-s", str(tmp_path / "run"),
         "-o", f"train_data_path={bad}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {bad}:7: expected 4 columns (word POS chunk NER), found 5"]
    assert result.stdout == ""
