"""POS data readers: CoNLL-U (UD EWT) and the NLTK Penn Treebank sample zip."""

from __future__ import annotations

from pathlib import Path

import pytest
from probe_samples import CONLLU, MRG, write_ptb_zip, write_ud

from elmo_experiments.errors import DataError
from elmo_experiments.probing.activations import bilm_token
from elmo_experiments.probing.pos_data import load_pos, parse_mrg, read_conllu, read_ptb_zip


def test_conllu_skips_comments_multiword_and_empty_nodes(tmp_path: Path) -> None:
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    xpos = read_conllu(path, "xpos")
    assert xpos == [(["I", "do", "n't", "run", "."], ["PRP", "VBP", "RB", "VB", "."]),
                    (["Dogs", "bark"], ["NNS", "VBP"])]
    upos = read_conllu(path, "upos")
    assert upos[0][1] == ["PRON", "AUX", "PART", "VERB", "PUNCT"]


def test_conllu_unknown_tagset(tmp_path: Path) -> None:
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    with pytest.raises(DataError, match="tag set"):
        read_conllu(path, "lemma")


def test_ud_layout_reads_gzipped_train(tmp_path: Path) -> None:
    write_ud(tmp_path)
    splits = load_pos("ud_ewt", tmp_path, "xpos")
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [6, 2, 2]


def test_mrg_drops_empty_elements() -> None:
    sentences = parse_mrg(MRG)
    assert sentences == [(["The", "cat", "sat", "."], ["DT", "NN", "VBD", "."]),
                         (["Pierre", "runs", "-LRB-", "in", "-RRB-"],
                          ["NNP", "VBZ", "-LRB-", "IN", "-RRB-"])]
    assert [bilm_token(t) for t in sentences[1][0]] == ["Pierre", "runs", "(", "in", ")"]


def test_ptb_zip_split_by_file_number(tmp_path: Path) -> None:
    path = write_ptb_zip(tmp_path / "treebank.zip", numbers=(1, 159, 160, 180, 199))
    splits = read_ptb_zip(path)
    assert {k: len(v) for k, v in splits.items()} == {"train": 4, "dev": 2, "test": 4}
    with pytest.raises(DataError, match="PTB tags only"):
        load_pos("ptb_sample", tmp_path, "upos")


def test_ptb_zip_without_parses(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "empty.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("treebank/raw/wsj_0001", "text")
    with pytest.raises(DataError, match="mrg"):
        read_ptb_zip(path)
