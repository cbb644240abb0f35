"""The ``column_tagging`` reader: users' own tagging files (2 columns, CoNLL-U), written here."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import pytest

from elmo_experiments.config.loader import PROJECT_ROOT, load_config
from elmo_experiments.config.validate import Validator
from elmo_experiments.data.fields import SequenceLabelField, TextField
from elmo_experiments.errors import ConfigError, DataError
from elmo_experiments.experiment import validate_experiment

NER_SAMPLE = PROJECT_ROOT / "reproduction" / "ner" / "sample"
INDEXERS = {"tokens": {"type": "single_id", "lowercase_tokens": True},
            "token_characters": {"type": "characters", "min_padding_length": 3}}
AS_CONLL2003 = {"token_column": 0, "tag_column": 3, "tag_scheme": "IOB1",
                "coding_scheme": "BIOUL"}
CONLLU = {"separator": "\t", "token_column": 1, "comment_prefix": "#", "skip_token_ids": True,
          "document_marker": None}

TWO_COLUMNS = [
    ("Mira", "B-PER"), ("Oakes", "I-PER"), ("visited", "O"), ("Port", "B-LOC"),
    ("Elm", "I-LOC"), ("today", "O"), None,
    ("Zorn", "B-ORG"), ("Ltd", "I-ORG"), ("Veda", "B-ORG"), ("grew", "O"),
]
TWO_COLUMNS_BIOUL = [
    ["B-PER", "L-PER", "O", "B-LOC", "L-LOC", "O"],
    ["B-ORG", "L-ORG", "U-ORG", "O"],
]

# A made-up CoNLL-U file: comments, a multiword token (3-4), an empty node (5.1), a form with a
# space (only a tab separator keeps it whole).
CONLLU_TEXT = """# newdoc id = demo
# sent_id = demo-1
# text = Brin says won't nap.
1\tBrin\tBrin\tPROPN\tNNP\tNumber=Sing\t2\tnsubj\t2:nsubj\t_
2\tsays\tsay\tVERB\tVBZ\t_\t0\troot\t0:root\t_
3-4\twon't\t_\t_\t_\t_\t_\t_\t_\t_
3\two\twill\tAUX\tMD\tVerbForm=Fin\t5\taux\t5:aux\t_
4\tn't\tnot\tPART\tRB\t_\t5\tadvmod\t5:advmod\t_
5\tnap\tnap\tVERB\tVB\tVerbForm=Inf\t2\tccomp\t2:ccomp\tSpaceAfter=No
5.1\tnap\tnap\tVERB\tVB\t_\t_\t_\t2:conj\tCopyOf=5
6\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_

# sent_id = demo-2
# text = New York wins
1\tNew York\tNew York\tPROPN\tNNP\tNumber=Sing\t2\tnsubj\t2:nsubj\t_
2\twins\twin\tVERB\tVBZ\t_\t0\troot\t0:root\t_
"""
CONLLU_TOKENS = [["Brin", "says", "wo", "n't", "nap", "."], ["New York", "wins"]]


def make_reader(**params: Any) -> Any:
    """A ``column_tagging`` reader built through the registry, as a config builds it."""
    validator = Validator()
    config = {"type": "column_tagging", "token_indexers": INDEXERS, **params}
    spec = validator.component(config, "dataset_reader", "dataset_reader")
    assert validator.problems == []
    return spec.build()


def conll2003(**params: Any) -> Any:
    validator = Validator()
    config = {"type": "conll2003", "token_indexers": INDEXERS, **params}
    spec = validator.component(config, "dataset_reader", "dataset_reader")
    assert validator.problems == []
    return spec.build()


def problems(**params: Any) -> list[str]:
    validator = Validator()
    validator.component({"type": "column_tagging", "token_indexers": {}, **params},
                        "dataset_reader", "dataset_reader")
    return validator.problems


def write_rows(path: Path, rows: list[tuple[str, ...] | None], separator: str) -> Path:
    path.write_text("".join("\n" if row is None else separator.join(row) + "\n" for row in rows),
                    encoding="utf-8")
    return path


def data_error(reader: Any, path: Path) -> str:
    with pytest.raises(DataError) as info:
        reader.read(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    return message


# ------------------------------------------------------------------ users' files


@pytest.mark.parametrize("separator", ["\t", " "])
def test_two_column_bio_file_is_converted_to_bioul(tmp_path: Path, separator: str) -> None:
    path = write_rows(tmp_path / "train.txt", TWO_COLUMNS, separator)
    reader = make_reader(tag_scheme="BIO", coding_scheme="BIOUL",
                         separator=separator if separator == "\t" else None)
    instances = reader.read(path)
    assert [i["tokens"] for i in instances] == [
        ["Mira", "Oakes", "visited", "Port", "Elm", "today"], ["Zorn", "Ltd", "Veda", "grew"]]
    assert [i["tags"] for i in instances] == TWO_COLUMNS_BIOUL
    assert reader.label_encoding == reader.coding_scheme == "BIOUL"


def test_declares_the_tagging_fields() -> None:
    reader = make_reader(tag_scheme="BIO")
    assert set(reader.fields) == {"tokens", "tags"}
    assert isinstance(reader.fields["tokens"], TextField)
    assert isinstance(reader.fields["tags"], SequenceLabelField)
    assert set(reader.token_indexers) == {"tokens", "token_characters"}
    assert reader.text_to_instance(["Hob", "ran"]) == {"tokens": ["Hob", "ran"], "tags": None}
    assert reader.text_to_instance(["Hob"], ["U-PER"])["tags"] == ["U-PER"]


def test_coding_scheme_defaults_to_the_file_scheme(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "train.txt", TWO_COLUMNS, "\t")
    reader = make_reader(tag_scheme="BIO")
    assert reader.label_encoding == "BIO"
    assert reader.read(path)[1]["tags"] == ["B-ORG", "I-ORG", "B-ORG", "O"]
    assert make_reader(tag_scheme="BIO", coding_scheme="IOB1").read(path)[1]["tags"] == [
        "I-ORG", "I-ORG", "B-ORG", "O"]


def test_iobes_tags_read_as_bioul(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "iobes.txt",
                      [("Al", "S-PER"), ("met", "O"), ("Bo", "B-PER"), ("Li", "E-PER")], " ")
    assert make_reader(tag_scheme="BIOUL", coding_scheme="BIO").read(path)[0]["tags"] == [
        "B-PER", "O", "B-PER", "I-PER"]


def test_plain_labels_are_read_unchecked_and_unconverted(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "pos.txt",
                      [("The", "DT"), ("B-52", "NNP"), ("flew", "X-odd"), None, ("Go", "VB")], "\t")
    reader = make_reader()
    assert reader.label_encoding is None and reader.coding_scheme is None
    assert reader.read(path) == [
        {"tokens": ["The", "B-52", "flew"], "tags": ["DT", "NNP", "X-odd"]},
        {"tokens": ["Go"], "tags": ["VB"]},
    ]


def test_whitespace_split_takes_the_last_column_of_ragged_rows(tmp_path: Path) -> None:
    path = tmp_path / "ragged.txt"
    path.write_text("Ami  NNP\tB-PER\r\nsat O\n   \n-DOCSTART- O\n\nUlm x y B-LOC\n",
                    encoding="utf-8")
    assert make_reader(tag_scheme="BIO").read(path) == [
        {"tokens": ["Ami", "sat"], "tags": ["B-PER", "O"]},
        {"tokens": ["Ulm"], "tags": ["B-LOC"]},
    ]


def test_document_marker_null_reads_docstart_as_a_token(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "doc.txt", [("-DOCSTART-", "O"), ("Ami", "O")], " ")
    assert make_reader().read(path)[0]["tokens"] == ["Ami"]
    assert make_reader(document_marker=None).read(path)[0]["tokens"] == ["-DOCSTART-", "Ami"]


def test_gzipped_file_and_path_gz_fallback(tmp_path: Path) -> None:
    text = "".join("\n" if row is None else "\t".join(row) + "\n" for row in TWO_COLUMNS)
    with gzip.open(tmp_path / "train.tsv.gz", "wt", encoding="utf-8") as handle:
        handle.write(text)
    reader = make_reader(separator="\t", tag_scheme="BIO", coding_scheme="BIOUL")
    assert [i["tags"] for i in reader.read(tmp_path / "train.tsv")] == TWO_COLUMNS_BIOUL


# ------------------------------------------------------------------ CoNLL-U


@pytest.fixture
def conllu_file(tmp_path: Path) -> Path:
    path = tmp_path / "demo.conllu"
    path.write_text(CONLLU_TEXT, encoding="utf-8")
    return path


def test_conllu_upos_and_xpos(conllu_file: Path) -> None:
    upos = make_reader(**CONLLU, tag_column=3).read(conllu_file)
    assert [i["tokens"] for i in upos] == CONLLU_TOKENS
    assert [i["tags"] for i in upos] == [["PROPN", "VERB", "AUX", "PART", "VERB", "PUNCT"],
                                         ["PROPN", "VERB"]]
    xpos = make_reader(**CONLLU, tag_column=4).read(conllu_file)
    assert [i["tokens"] for i in xpos] == CONLLU_TOKENS
    assert [i["tags"] for i in xpos] == [["NNP", "VBZ", "MD", "RB", "VB", "."], ["NNP", "VBZ"]]


def test_conllu_keeps_multiword_and_empty_node_lines_unless_told(conllu_file: Path) -> None:
    reader = make_reader(**{**CONLLU, "skip_token_ids": False}, tag_column=3)
    assert reader.read(conllu_file)[0]["tokens"] == [
        "Brin", "says", "won't", "wo", "n't", "nap", "nap", "."]


def test_conllu_errors_name_the_file_line(conllu_file: Path) -> None:
    lines = CONLLU_TEXT.splitlines(keepends=True)
    lines[15] = "2\twins\twin\tVERB\n"  # line 16, after comments and skipped lines
    conllu_file.write_text("".join(lines), encoding="utf-8")
    message = data_error(make_reader(**CONLLU, tag_column=3), conllu_file)
    assert message == (f"{conllu_file}:16: 4 columns, but the sentence's first row has 10 "
                       f"(separator '\\t')")


def test_real_ud_english_ewt_dev() -> None:
    root = os.environ.get("ELMO_DATA_DIR")
    path = Path(root or "no-data") / "pos" / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
    if root is None or not path.is_file():
        pytest.skip("UD English-EWT dev not found under $ELMO_DATA_DIR "
                    "(pos/ud_english_ewt/en_ewt-ud-dev.conllu)")
    upos = make_reader(**CONLLU, tag_column=3).read(path)
    assert len(upos) == 2001
    assert sum(len(i["tokens"]) for i in upos) == 25147
    universal = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART",
                 "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"}
    assert {t for i in upos for t in i["tags"]} <= universal
    xpos = make_reader(**CONLLU, tag_column=4).read(path)
    assert [i["tokens"] for i in xpos] == [i["tokens"] for i in upos]
    assert {"NN", "NNP", "VBZ", "DT"} <= {t for i in xpos for t in i["tags"]}


# ------------------------------------------------------------------ the CoNLL-2003 reader


@pytest.mark.parametrize("name", ["train.txt", "dev.txt", "test.txt"])
def test_configured_as_conll2003_it_reads_the_same(name: str) -> None:
    reader, reference = make_reader(**AS_CONLL2003), conll2003()
    assert reader.read(NER_SAMPLE / name) == reference.read(NER_SAMPLE / name)
    assert (reader.label_encoding, reader.coding_scheme) == ("BIOUL", "BIOUL")
    assert (reference.label_encoding, reference.coding_scheme) == ("BIOUL", "BIOUL")


@pytest.mark.parametrize(("params", "reference"), [
    ({"tag_column": 3, "tag_scheme": "IOB1", "coding_scheme": "BIO"}, {"coding_scheme": "BIO"}),
    ({"tag_column": 3, "tag_scheme": "IOB1"}, {"coding_scheme": "IOB1"}),
    ({"tag_column": 2, "tag_scheme": "IOB1", "coding_scheme": "BIOUL"}, {"tag_label": "chunk"}),
    ({"tag_column": 1}, {"tag_label": "pos"}),
])
def test_every_conll2003_setting_has_its_column_tagging_twin(params: dict[str, Any],
                                                            reference: dict[str, Any]) -> None:
    reader = make_reader(**params)
    path = NER_SAMPLE / "train.txt"
    assert reader.read(path) == conll2003(**reference).read(path)
    assert reader.label_encoding == conll2003(**reference).label_encoding


def test_real_conll2003_reads_the_same() -> None:
    path = Path(os.environ.get("ELMO_DATA_DIR", "no-data")) / "ner_conll2003" / "eng.testa"
    if not path.is_file():
        pytest.skip("real CoNLL-2003 not found under $ELMO_DATA_DIR (ner_conll2003/eng.testa)")
    assert make_reader(**AS_CONLL2003).read(path) == conll2003().read(path)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(("rows", "params", "expected"), [
    ([("Ami", "O"), ("sat",)], {}, "2: 1 column, too few for token_column 0 and tag_column -1"),
    ([("Ami", "O", "x")], {"tag_column": 3},
     "1: 3 columns, too few for token_column 0 and tag_column 3"),
    ([("1", "Ami")], {"token_column": 2, "tag_column": 1},
     "1: 2 columns, too few for token_column 2 and tag_column 1"),
    ([("Ami", "O"), None, ("Bo", "B-PER"), ("sat", "X-PER")], {"tag_scheme": "BIO"},
     "4: invalid BIO tag 'X-PER' (expected O, B-TYPE or I-TYPE)"),
    ([("Ami", "I-")], {"tag_scheme": "IOB1"},
     "1: invalid IOB1 tag 'I-' (expected O, I-TYPE or B-TYPE)"),
    ([("Ami", "L-PER")], {"tag_scheme": "BIO"}, "1: invalid BIO tag 'L-PER'"),
    ([("Ami", "o")], {"tag_scheme": "BIOUL"}, "1: invalid BIOUL tag 'o'"),
    ([("Ami", "B-PER X")], {"tag_scheme": "BIO", "separator": "\t"},
     "1: invalid BIO tag 'B-PER X'"),
    ([("Ami", "O"), ("sat", "x", "O")], {"separator": "\t"},
     "2: 3 columns, but the sentence's first row has 2 (separator '\\t')"),
    ([("Ami", "O"), ("", "O")], {"separator": "\t"}, "2: empty token (column 0)"),
    ([("Ami", "")], {"separator": "\t"}, "1: empty tag (column -1)"),
    ([("Ami", "O"), None, ("a", "O"), ("b", "O"), ("c", "O")], {"max_sentence_length": 2},
     "3: a sentence of more than 2 tokens (no blank line between sentences?); raise "
     "dataset_reader.max_sentence_length to read it"),
])
def test_bad_rows_are_one_line_data_errors(tmp_path: Path, rows: list[Any],
                                           params: dict[str, Any], expected: str) -> None:
    path = write_rows(tmp_path / "bad.txt", rows, "\t")
    message = data_error(make_reader(**params), path)
    assert message.startswith(f"{path}:{expected}"), message


def test_a_file_without_sentences(tmp_path: Path) -> None:
    path = tmp_path / "empty.conllu"
    path.write_text("# only a comment\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"empty\.conllu: no sentences found"):
        make_reader(**CONLLU, tag_column=3).read(path)


def test_bad_settings_are_config_problems() -> None:
    assert problems(tag_scheme="IOBES")[0].startswith(
        "dataset_reader.tag_scheme: 'IOBES' is not one of 'IOB1', 'BIO', 'BIOUL'")
    assert problems(separator="") == ["dataset_reader.separator: must not be empty (null for none)"]
    assert problems(document_marker=3)[0].startswith("dataset_reader.document_marker: expected")
    assert problems(token_column=-1) == ["dataset_reader.token_column: -1 is outside [0, inf]"]
    assert problems(document_marker=None, comment_prefix=None, separator=None) == []


@pytest.mark.parametrize(("params", "expected"), [
    ({"coding_scheme": "BIOUL"}, "coding_scheme 'BIOUL' needs the file's tag_scheme"),
    ({"token_column": 1, "tag_column": 1}, "tag_column 1 is the token column"),
])
def test_inconsistent_settings_fail_when_built(params: dict[str, Any], expected: str) -> None:
    validator = Validator()
    spec = validator.component({"type": "column_tagging", "token_indexers": {}, **params},
                               "dataset_reader", "dataset_reader")
    assert validator.problems == []
    with pytest.raises(ConfigError, match=f"dataset_reader: {expected}"):
        spec.build()


# ------------------------------------------------------------------ in an experiment


def test_ner_experiment_with_the_column_tagging_reader(tiny_bilm_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """experiments/ner.jsonnet with its reader switched: it validates, and reader, vocabulary,
    model and conlleval come out as with the conll2003 reader."""
    from elmo_experiments.run import build_dataset_metric, build_model, build_vocabulary

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
    config = load_config(PROJECT_ROOT / "experiments" / "ner.jsonnet")
    indexers = config["dataset_reader"]["token_indexers"]
    switched = {**config, "dataset_reader": {"type": "column_tagging", "token_indexers": indexers,
                                             **AS_CONLL2003}}
    experiment = validate_experiment(switched, source="ner.jsonnet", check_paths=True)
    assert experiment.reader.entry.name == "column_tagging"
    reference = validate_experiment(config, source="ner.jsonnet")
    readers = experiment.reader.build(), reference.reader.build()
    data = [reader.read(experiment["train_data_path"]) for reader in readers]
    assert data[0] == data[1]
    vocabs = [build_vocabulary(reader, instances, experiment["vocabulary"])
              for reader, instances in zip(readers, data, strict=True)]
    assert vocabs[0].namespaces() == vocabs[1].namespaces()
    assert all(vocabs[0].tokens(n) == vocabs[1].tokens(n) for n in vocabs[0].namespaces())
    metric = build_dataset_metric(experiment, readers[0], vocabs[0])
    assert metric is not None and metric.label_encoding == "BIOUL"
    model = build_model(experiment, readers[0], vocabs[0])
    assert model.span_f1 is not None
