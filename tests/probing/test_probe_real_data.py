"""Smoke tests on the real probing data; they skip without ``ELMO_DATA_DIR`` (counts as in the
data's SOURCE.txt)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elmo_experiments.probing.pos_data import PTB_SAMPLE, UD_EWT, load_pos, read_conllu
from elmo_experiments.probing.raganato import eval_files, read_keys, read_xml
from elmo_experiments.probing.semcor import SEMCOR, read_semcor

ROOT = Path(os.environ.get("ELMO_DATA_DIR", "/nonexistent"))


def _need(relative: str) -> Path:
    path = ROOT / relative
    if not path.exists():
        pytest.skip(f"real data: {relative} not under $ELMO_DATA_DIR")
    return path


def test_ud_ewt_dev() -> None:
    path = _need(UD_EWT.format(split="dev"))
    sentences = read_conllu(path, "xpos")
    assert len(sentences) == 2001
    assert sum(len(tokens) for tokens, _ in sentences) == 25147


def test_ptb_sample() -> None:
    _need(PTB_SAMPLE)
    splits = load_pos("ptb_sample", ROOT)
    assert sum(len(s) for s in splits.values()) == 3914
    assert sum(len(t) for s in splits.values() for t, _ in s) == 94084


def test_semeval2007() -> None:
    xml, keys = eval_files(ROOT, "semeval2007")
    _need(str(xml.relative_to(ROOT)))
    sentences = read_xml(xml)
    gold = read_keys(keys)
    instances = [a.id for s in sentences for a in s.annotations]
    assert len(instances) == len(gold) == 455
    assert set(instances) == set(gold)


def test_semcor_counts() -> None:
    sentences = read_semcor(_need(SEMCOR))
    assert len(sentences) == 37176
    assert sum(len(s.annotations) for s in sentences) == 234136


def test_first_sense_baseline_matches_raganato() -> None:
    """Raganato et al. (2017) report WordNet's first sense at 55.2 F1 on semeval2007."""
    from elmo_experiments.probing.raganato import score
    from elmo_experiments.probing.wordnet import FirstSense, load_wordnet, wordnet_problem
    from elmo_experiments.probing.wsd import first_sense_answers

    problem = wordnet_problem()
    if problem:
        pytest.skip(f"real WordNet: {problem}")
    xml, keys = eval_files(ROOT, "semeval2007")
    _need(str(xml.relative_to(ROOT)))
    result = score(read_keys(keys), first_sense_answers(read_xml(xml), FirstSense(load_wordnet())))
    assert (result.earned, result.answered) == (251, 455)
    assert result.as_dict()["f1"] == 55.16
