"""Coreference data: the CoNLL-2012 layout shared with SRL, the coreference column (nesting,
overlap, singletons, errors), windows, choosing documents and splits, OntoNotes-style files,
the embedded sample, batching through the framework, and the real LitBank files."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest
from task_scripts import load_script

from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.config.validate import Validator
from elmo_experiments.data.batching import collate, index_instances
from elmo_experiments.data.readers.conll2012 import iter_parts, iter_sentences, parse_header
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.coref.reader import CorefReader, data_files

SAMPLE = PROJECT_ROOT / "reproduction" / "coref" / "sample"
LITBANK = Path(os.environ.get("ELMO_DATA_DIR", "no-data")) / "coref_litbank"


def litbank_row(doc: str, number: int, word: str, coref: str = "") -> str:
    """A row in LitBank's layout: 13 tab-separated columns, the last empty without a mention."""
    return "\t".join([doc, "0", str(number), word, *["_"] * 8, coref])


def litbank(name: str, sentences: list[list[tuple[str, str]]]) -> list[str]:
    """A LitBank-style document of (word, coreference cell) sentences."""
    lines = [f"#begin document ({name}); part 0"]
    for sentence in sentences:
        lines += [litbank_row(name, i, w, c) for i, (w, c) in enumerate(sentence)]
        lines.append("")
    return [*lines, "#end document"]


def write(path: Path, lines: list[str]) -> Path:
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sentence(*cells: str) -> list[tuple[str, str]]:
    return [(f"w{i}", cell) for i, cell in enumerate(cells)]


def read_one(tmp_path: Path, sentences: list[list[tuple[str, str]]],
             **params: Any) -> dict[str, Any]:
    [instance] = CorefReader({}, **params).read(write(tmp_path / "d.conll",
                                                      litbank("d", sentences)))
    return instance


# --- the coreference column ----------------------------------------------------------------

def test_nested_overlapping_and_one_token_mentions(tmp_path: Path) -> None:
    instance = read_one(tmp_path, [
        sentence("(0", "(1)", "0)", ""),          # [0 w0 [1 w1 1] w2 0]
        sentence("(2|(0)", "(3", "2)", "3)"),     # overlap: [2 w4 [3 w5 2] w6 3]
    ])
    assert instance["clusters"] == [[[0, 2], [4, 4]], [[1, 1]], [[4, 6]], [[5, 7]]]
    assert instance["sentence_offsets"] == [0, 4]
    assert instance["document"] == [["w0", "w1", "w2", "w3"], ["w0", "w1", "w2", "w3"]]


def test_same_id_nesting_pops_the_innermost_mention(tmp_path: Path) -> None:
    instance = read_one(tmp_path, [
        sentence("(5", "(5", "5)", "5)"),         # [5 [5 w1 w2 5] w3 5]
        sentence("(5|(5)", "5)", "(5)|(6)", ""),  # [5 [5 w4 5] w5 5], and two singletons
    ])
    assert instance["clusters"] == [[[0, 3], [1, 2], [4, 4], [4, 5], [6, 6]], [[6, 6]]]


def test_singletons_are_kept_and_clusters_ordered_by_first_mention(tmp_path: Path) -> None:
    instance = read_one(tmp_path, [sentence("(9)", "(3", "3)", "(9)", "(4)", "-", "_")])
    assert instance["clusters"] == [[[0, 0], [3, 3]], [[1, 2]], [[4, 4]]]
    assert (instance["speakers"], instance["genre"], instance["window"]) == (None, None, None)
    assert (instance["document_id"], instance["part"]) == ("d", "0")


@pytest.mark.parametrize(("sentences", "line", "message"), [
    ([sentence("(1", "2)")], 3, "coreference '2\\)' closes no open mention of cluster 2$"),
    ([sentence("1)")], 2, "coreference '1\\)' closes no open mention of cluster 1$"),
    ([sentence("(1", ""), sentence("(1)")], 2,
     r"coreference '\(1' is never closed \(its document part ends at line 7\)"),
    ([sentence("(1", ""), sentence("1)")], 5,
     "coreference '1\\)' closes a mention opened at line 2, in an earlier sentence"),
    ([sentence("", "7")], 3, "coreference column '7': '7' is not '\\(id', 'id\\)' or '\\(id\\)'"),
    ([sentence("(1)(2)")], 2, "coreference column '\\(1\\)\\(2\\)': '\\(1\\)\\(2\\)' is not"),
    ([sentence("(1||2)")], 2, "coreference column '\\(1\\|\\|2\\)': '' is not"),
    ([sentence("((1")], 2, "'\\(\\(1' is not"),
])
def test_malformed_coreference_columns_are_one_line_errors(
        tmp_path: Path, sentences: list[list[tuple[str, str]]], line: int, message: str) -> None:
    with pytest.raises(DataError) as caught:
        read_one(tmp_path, sentences)
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(f"{tmp_path / 'd.conll'}:{line}: ")
    assert re.search(message, text), text


@pytest.mark.parametrize(("lines", "message"), [
    (["#begin document (d); part 0", "d\t0\t0\tw", "#end document"],
     r"d\.conll:2: expected at least 5 columns \(document, part, word number, word, \.\.\., "
     r"coreference last\), found 4$"),
    ([litbank_row("d", 0, "w")], r"d\.conll:1: token line outside '#begin document'$"),
    (["#begin document (d); part 0", litbank_row("d", 0, "w")],
     r"d\.conll:1: document '\(d\); part 0' has no '#end document' line$"),
    (["#begin document (d); part 0", litbank_row("d", 0, "w"), "#begin document (e); part 0"],
     r"d\.conll:3: '#begin document' inside document '\(d\); part 0' \(line 1\)"),
    (["#end document"], r"d\.conll:1: '#end document' without a '#begin document'$"),
    (["#begin document (d); part 0", "#end document"],
     r"d\.conll:1: document '\(d\); part 0' has no sentences$"),
    (["#begin document (d); part 0", litbank_row("d", 0, "w"), "d 0 1 w - -", "#end document"],
     r"d\.conll:3: 6 columns, but the sentence's first row \(line 2\) has 13$"),
])
def test_malformed_files_are_one_line_errors(tmp_path: Path, lines: list[str],
                                             message: str) -> None:
    with pytest.raises(DataError, match=message) as caught:
        CorefReader({}).read(write(tmp_path / "d.conll", lines))
    assert "\n" not in str(caught.value)


# --- windows -------------------------------------------------------------------------------

def test_windows_restrict_clusters_and_restart_offsets(tmp_path: Path, caplog) -> None:
    sentences = [
        sentence("(1)", "(2", "2)"),      # tokens 0-2
        sentence("(1)", ""),              # 3-4
        sentence("(3", "(1)|3)"),         # 5-6
        sentence("", "(2)", "(1)"),       # 7-9
        sentence("(4)"),                  # 10
    ]
    whole = read_one(tmp_path, sentences)
    assert whole["clusters"] == [[[0, 0], [3, 3], [6, 6], [9, 9]], [[1, 2], [8, 8]],
                                 [[5, 6]], [[10, 10]]]
    with caplog.at_level(logging.INFO, logger="elmo_experiments"):
        windows = CorefReader({}, max_sentences=2).read(tmp_path / "d.conll")
    assert [w["window"] for w in windows] == [
        {"index": 0, "first_sentence": 0, "first_token": 0, "windows": 3},
        {"index": 1, "first_sentence": 2, "first_token": 5, "windows": 3},
        {"index": 2, "first_sentence": 4, "first_token": 10, "windows": 3}]
    assert [w["document"] for w in windows] == [whole["document"][0:2], whole["document"][2:4],
                                                whole["document"][4:]]
    assert [w["sentence_offsets"] for w in windows] == [[0, 3], [0, 2], [0]]
    assert windows[0]["clusters"] == [[[0, 0], [3, 3]], [[1, 2]]]
    assert windows[1]["clusters"] == [[[0, 1]], [[1, 1], [4, 4]], [[3, 3]]]
    assert windows[2]["clusters"] == [[[0, 0]]]
    assert all(w["document_id"] == "d" and w["part"] == "0" for w in windows)
    assert sum(len(c) for w in windows for c in w["clusters"]) == 8  # no mention lost
    assert "1 parts, 3 instances (windows of at most 2 sentences), 5 sentences, 11 tokens, " \
           "8 mentions, 4 clusters (2 singletons)" in caplog.text
    # a part within the limit is one instance, not a window
    assert CorefReader({}, max_sentences=5).read(tmp_path / "d.conll")[0]["window"] is None


# --- choosing files, documents and splits --------------------------------------------------

@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A LitBank-like folder: conll/ with four documents, split.json beside it."""
    for name in ("a", "b", "c", "d"):
        write(tmp_path / "corpus" / "conll" / f"{name}_brat.conll",
              litbank(f"{name}_brat", [[("x", "(0)"), (name, "")]]))
    (tmp_path / "corpus" / "split.json").write_text(json.dumps({
        "description": "made up", "counts": {"train": {"documents": 2}},
        "train": ["c_brat.conll", "a_brat.conll"], "dev": ["b_brat.conll"],
        "test": ["d_brat.conll"]}))
    return tmp_path / "corpus"


def ids(instances: list[dict[str, Any]]) -> list[str]:
    return [i["document_id"] for i in instances]


def test_a_split_is_chosen_by_the_data_path_or_by_documents(corpus: Path) -> None:
    reader = CorefReader({})
    assert ids(reader.read(corpus / "conll")) == ["a_brat", "b_brat", "c_brat", "d_brat"]
    assert ids(reader.read(f"{corpus / 'conll'}#train")) == ["c_brat", "a_brat"]  # its order
    assert ids(reader.read(f"{corpus / 'conll'}#test")) == ["d_brat"]
    split_file = str(corpus / "split.json")
    chosen = CorefReader({}, documents={"split_file": split_file, "split": "dev"})
    assert ids(chosen.read(corpus / "conll")) == ["b_brat"]
    assert ids(chosen.read(f"{corpus / 'conll'}#dev")) == ["b_brat"]
    other = CorefReader({}, documents={"split_file": split_file})  # the path names the split
    assert ids(other.read(f"{corpus / 'conll'}#test")) == ["d_brat"]
    listed = CorefReader({}, documents=["d_brat.conll", "b_brat.conll"])
    assert ids(listed.read(corpus / "conll")) == ["d_brat", "b_brat"]
    (corpus / "conll" / "split.json").write_text(json.dumps({"train": ["b_brat.conll"]}))
    assert ids(reader.read(f"{corpus / 'conll'}#train")) == ["b_brat"]  # inside wins


def test_choosing_documents_errors(corpus: Path, tmp_path: Path) -> None:
    folder = corpus / "conll"
    with pytest.raises(DataError, match=r"no split 'trian' \(a list of file names\); it has "
                                        r"'train', 'dev', 'test'"):
        data_files(f"{folder}#trian")
    with pytest.raises(DataError, match=r"#: nothing after '#'"):
        data_files(f"{folder}#")
    with pytest.raises(DataError, match=r"'#dev' chooses a split, but dataset_reader\.documents "
                                        r"chooses 'train'"):
        data_files(f"{folder}#dev", {"split_file": str(corpus / "split.json"), "split": "train"})
    with pytest.raises(DataError, match="already lists the documents"):
        data_files(f"{folder}#dev", ["a_brat.conll"])
    with pytest.raises(DataError, match=r"a listed document is missing: .*e_brat\.conll: no such"):
        data_files(folder, ["a_brat.conll", "e_brat.conll"])
    with pytest.raises(DataError, match=r"documents listed twice: a_brat\.conll"):
        data_files(folder, ["a_brat.conll", "a_brat.conll"])
    with pytest.raises(DataError, match="choosing documents needs a folder"):
        data_files(folder / "a_brat.conll", ["a_brat.conll"])
    lone = tmp_path / "lone"
    lone.mkdir()
    write(lone / "x.conll", litbank("x", [sentence("")]))
    with pytest.raises(DataError, match=r"no split.json in it or beside it"):
        data_files(f"{lone}#train")
    with pytest.raises(DataError, match="no CoNLL files found"):
        data_files(tmp_path / "lone" / "*.txt")


def test_documents_parameter_is_checked_by_the_config() -> None:
    for bad in ([], [""], {"split": "train"}, {"split_file": "s.json", "splits": "x"},
                {"split_file": "s.json", "split": ""}, "split.json"):
        validator = Validator()
        validator.component({"type": "coref_conll2012", "token_indexers": {}, "documents": bad},
                            "dataset_reader", "dataset_reader")
        assert any("documents" in p for p in validator.problems), bad
    validator = Validator()
    validator.component({"type": "coref_conll2012", "token_indexers": {}, "max_sentences": 0},
                        "dataset_reader", "dataset_reader")
    assert validator.problems


# --- OntoNotes-style files -----------------------------------------------------------------

def ontonotes_row(doc: str, part: int, number: int, word: str, speaker: str, props: list[str],
                  coref: str) -> str:
    """A space-aligned ``*_gold_conll`` row: 11 fixed columns, props columns, coreference."""
    return " ".join([doc, str(part), str(number), word, "NN", "*", "-", "-", "-", speaker, "*",
                     *props, coref])


def ontonotes(doc: str) -> list[str]:
    return [f"#begin document ({doc}); part 000",
            ontonotes_row(doc, 0, 0, "Ada", "Speaker#1", ["(ARG0*)"], "(12)"),
            ontonotes_row(doc, 0, 1, "-LRB-", "Speaker#1", ["*"], "-"),
            ontonotes_row(doc, 0, 2, "left", "Speaker#1", ["(V*)"], "-"),
            ontonotes_row(doc, 0, 3, "/.", "Speaker#1", ["*"], "-"),
            "",
            ontonotes_row(doc, 0, 0, "She", "Speaker#2", [], "(12)"),
            ontonotes_row(doc, 0, 1, "smiled", "Speaker#2", [], "-"),
            "",
            "#end document",
            f"#begin document ({doc}); part 001",
            ontonotes_row(doc, 1, 0, "Hello", "-", [], "(3"),
            ontonotes_row(doc, 1, 1, "there", "-", [], "3)"),
            "",
            "#end document"]


def test_ontonotes_parts_speakers_genre_and_escapes(tmp_path: Path) -> None:
    path = write(tmp_path / "cctv_0001.v4_gold_conll.gz", ontonotes("bc/cctv/00/cctv_0001"))
    first, second = CorefReader({}).read(tmp_path / "cctv_0001.v4_gold_conll")  # finds .gz
    assert (first["document_id"], first["part"], first["genre"]) == \
        ("bc/cctv/00/cctv_0001", "000", "bc")
    assert first["document"] == [["Ada", "(", "left", "."], ["She", "smiled"]]
    assert first["speakers"] == [["Speaker#1"] * 4, ["Speaker#2"] * 2]
    assert first["clusters"] == [[[0, 0], [4, 4]]]
    assert (second["part"], second["clusters"], second["speakers"]) == \
        ("001", [[[0, 1]]], [["-", "-"]])
    assert CorefReader({}, unescape=False).read(path)[0]["document"][0][1] == "-LRB-"
    write(tmp_path / "tree" / "nw" / "wsj_0002.v4_gold_conll", ontonotes("nw/wsj/00/wsj_0002"))
    write(tmp_path / "tree" / "README.txt", ["not data"])
    everything = CorefReader({}).read(tmp_path / "tree")  # a folder reads its *conll files
    assert [(i["document_id"], i["genre"]) for i in everything] == \
        [("nw/wsj/00/wsj_0002", "nw")] * 2
    globbed = CorefReader({}).read(f"{tmp_path}/**/*_gold_conll*")
    assert [i["genre"] for i in globbed] == ["bc", "bc", "nw", "nw"]


def test_the_shared_conll2012_layout(tmp_path: Path) -> None:
    """The SRL reader's sentence stream and the part iterator read the same rows."""
    path = write(tmp_path / "x_gold_conll", ontonotes("bc/x/00/x_0001"))
    sentences = list(iter_sentences(path))
    parts = list(iter_parts(path))
    assert [rows for p in parts for rows in p.sentences] == [rows for rows, _ in sentences]
    assert [header for _, header in sentences] == ["(bc/x/00/x_0001); part 000"] * 2 + \
        ["(bc/x/00/x_0001); part 001"]
    assert [(p.begin_line, p.end_line) for p in parts] == [(1, 10), (11, 15)]
    assert parse_header("(a/b); part 003") == ("a/b", "003")
    assert parse_header("odd header") == ("odd header", None)
    tabbed = write(tmp_path / "t.conll", litbank("t", [sentence("", "(1)")]))
    [part] = iter_parts(tabbed)
    assert [len(fields) for _, fields in part.sentences[0]] == [13, 13]  # empty last kept


def test_text_to_instance() -> None:
    instance = CorefReader({}).text_to_instance([["Ada", "left", "."], ["She", "smiled"]])
    assert instance["clusters"] is None and instance["sentence_offsets"] == [0, 3]
    with pytest.raises(DataError, match="at least one sentence"):
        CorefReader({}).text_to_instance([["Ada"], []])


# --- the embedded sample -------------------------------------------------------------------

def make_sample_module() -> Any:
    return load_script(SAMPLE / "make_sample.py", "coref_make_sample")


def test_make_sample_writes_the_committed_sample_and_checks_it(tmp_path: Path) -> None:
    module = make_sample_module()
    for split, stories in module.SPLITS.items():
        module.write(tmp_path / f"{split}.conll", stories)
        assert (tmp_path / f"{split}.conll").read_bytes() == \
            (SAMPLE / f"{split}.conll").read_bytes()
        module.check(SAMPLE / f"{split}.conll", stories)


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_the_sample(split: str) -> None:
    instances = CorefReader({}).read(SAMPLE / f"{split}.conll")
    assert len(instances) >= 2
    for instance in instances:
        assert 5 <= len(instance["document"]) <= 15
        assert instance["speakers"] is None and instance["genre"] is None
        tokens = sum(len(s) for s in instance["document"])
        spans = [tuple(m) for c in instance["clusters"] for m in c]
        assert all(0 <= s <= e < tokens for s, e in spans)
        assert any(len(c) == 1 for c in instance["clusters"])
        assert any(len(c) >= 3 for c in instance["clusters"])
        assert any(a[0] <= b[0] and b[1] <= a[1] and a != b for a in spans for b in spans)
    words = {w for i in instances for s in i["document"] for w in s}
    assert words & {"he", "she", "her", "his"}


# --- the framework -------------------------------------------------------------------------

def test_configured_reader_indexes_and_batches_documents() -> None:
    config = {"type": "coref_conll2012", "max_sentences": 4, "token_indexers": {
        "tokens": {"type": "single_id", "lowercase_tokens": True},
        "token_characters": {"type": "characters"}}}
    validator = Validator()
    spec = validator.component(config, "dataset_reader", "dataset_reader")
    assert not validator.problems, validator.problems
    reader = spec.build()
    assert isinstance(reader, CorefReader) and reader.max_sentences == 4
    train = reader.read(SAMPLE / "train.conll")
    assert len(train) > 3 and all(len(i["document"]) <= 4 for i in train)
    counts: dict[str, Any] = {}
    for instance in train:
        for name, field in reader.fields.items():
            field.count(instance[name], counts)
    vocab = Vocabulary.from_counts(counts)
    batch = train[:3]
    indexed = index_instances(batch, reader.fields, vocab, source="train.conll")
    arguments = collate(indexed, reader.fields).arguments()
    sentences = max(len(i["document"]) for i in batch)
    width = max(len(s) for i in batch for s in i["document"])
    assert arguments["document"]["tokens"].shape == (3, sentences, width)
    assert arguments["document"]["token_characters"].shape[:3] == (3, sentences, width)
    mask = arguments["document_mask"]
    assert mask.shape == (3, sentences, width)
    assert mask.sum((1, 2)).tolist() == [sum(len(s) for s in i["document"]) for i in batch]
    assert [m["clusters"] for m in arguments["metadata"]] == [i["clusters"] for i in batch]
    first = batch[0]["document"][0][0].lower()
    assert arguments["document"]["tokens"][0, 0, 0] == vocab.index("tokens", first)


# --- the real data -------------------------------------------------------------------------

@pytest.mark.skipif(not (LITBANK / "conll").is_dir() or not (LITBANK / "split.json").is_file(),
                    reason="LitBank is not under $ELMO_DATA_DIR/coref_litbank (set ELMO_DATA_DIR)")
def test_real_litbank(caplog: pytest.LogCaptureFixture) -> None:
    """About 3 s: every document, then each proposed split."""
    reader = CorefReader({})
    with caplog.at_level(logging.INFO, logger="elmo_experiments"):
        everything = reader.read(LITBANK / "conll")
    assert len(everything) == len({i["document_id"] for i in everything}) == 100
    assert sum(len(s) for i in everything for s in i["document"]) == 210_532
    assert sum(len(c) for i in everything for c in i["clusters"]) == 29_103
    assert sum(len(i["clusters"]) for i in everything) == 7_927
    assert all(i["speakers"] is None and i["genre"] is None and i["part"] == "0"
               for i in everything)
    assert "100 documents, 100 parts, 100 instances, 8,562 sentences, 210,532 tokens, " \
           "29,103 mentions, 7,927 clusters (5,763 singletons)" in caplog.text
    names: set[str] = set()
    for split, documents, tokens in (("train", 80, 166_604), ("dev", 10, 20_467),
                                     ("test", 10, 23_461)):
        instances = reader.read(f"{LITBANK / 'conll'}#{split}")
        assert len(instances) == documents, split
        assert sum(len(s) for i in instances for s in i["document"]) == tokens, split
        names |= {i["document_id"] for i in instances}
    assert len(names) == 100  # the splits are disjoint and cover LitBank
    windows = CorefReader({}, max_sentences=30).read(f"{LITBANK / 'conll'}#dev")
    assert sum(len(c) for i in windows for c in i["clusters"]) == sum(
        len(c) for i in reader.read(f"{LITBANK / 'conll'}#dev") for c in i["clusters"])
