"""WSD probe pieces: SemCor and Raganato readers, the scorer, nearest mean sense, backoff."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from probe_samples import BROWNV, TAGFILE, FakeWordNet, write_eval_set, write_semcor

from elmo_experiments.errors import DataError
from elmo_experiments.probing.raganato import read_keys, read_xml, score
from elmo_experiments.probing.semcor import parse_tagfile, read_semcor
from elmo_experiments.probing.senses import Annotation, key_lemma_pos
from elmo_experiments.probing.wordnet import FirstSense, load_wordnet, wordnet_problem
from elmo_experiments.probing.wsd import (
    SenseAccumulator,
    disambiguate,
    format_results,
    run_wsd_probe,
)


def test_semcor_tagfile() -> None:
    first, second = parse_tagfile(TAGFILE.splitlines(), "brown1/br-z01")
    assert first.id == "brown1/br-z01.s1"
    assert first.tokens == ["The", "Big", "Town", "Club", "played", "year", "took", "place", "."]
    spans = [(a.start, a.end, a.lemma, a.pos, a.keys) for a in first.annotations]
    assert spans == [(1, 4, "group", "n", ("group%1:03:00::",)),
                     (4, 5, "play", "v", ("play%2:33:00::",)),
                     (5, 6, "year", "n", ("year%1:28:02::", "year%1:28:01::")),
                     (6, 8, "take_place", "v", ("take_place%2:30:00::",))]
    # cmd=done without lemma/lexsn (ot=notag) is not a sense tag; a satellite is an adjective
    assert [(a.lemma, a.pos) for a in second.annotations] == [("play", "n"), ("recent", "a")]


def test_semcor_brownv_tags_verbs_only() -> None:
    (sentence,) = parse_tagfile(BROWNV.splitlines(), "brownv/br-z02")
    assert sentence.tokens == ["actors", "play", "play"]
    assert [(a.start, a.keys) for a in sentence.annotations] == [(1, ("play%2:33:00::",))]


def test_semcor_archive(tmp_path: Path) -> None:
    sentences = read_semcor(write_semcor(tmp_path / "semcor3.0.tar.gz"))
    assert [s.id for s in sentences] == ["brown1/br-z01.s1", "brown1/br-z01.s2",
                                         "brownv/br-z02.s1"]
    assert sum(len(s.annotations) for s in sentences) == 7
    with pytest.raises(DataError):
        read_semcor(tmp_path / "missing.tar.gz")


def test_raganato_xml_and_keys(tmp_path: Path) -> None:
    xml, keys = write_eval_set(tmp_path)
    first, second = read_xml(xml)
    assert first.tokens == ["The", "actors", "played", "a", "play", "."]
    assert second.tokens == ["belong", "to", "'s", "recent"]
    assert [(a.id, a.start, a.end, a.lemma, a.pos) for a in second.annotations] == [
        ("d000.s001.t000", 0, 2, "belong_to", "v"), ("d000.s001.t001", 3, 4, "recent", "a")]
    gold = read_keys(keys)
    assert gold["d000.s000.t001"] == ["play%1:10:01::", "play%1:10:03::"]
    assert len(gold) == 4


def test_scorer_hand_computed() -> None:
    gold = {"a": ["k1"], "b": ["k2", "k3"], "c": ["k4"], "d": ["k5"], "e": ["k6"]}
    answers = {"a": "k1",  # right: 1
               "b": "K3",  # any gold key, case-insensitive: 1
               "c": "k9",  # wrong: 0
               "d": None,  # unanswered
               "e": ["k6", "k7"]}  # two answers, one right: 1/2
    result = score(gold, answers)
    assert result.earned == 2.5 and result.answered == 4 and result.total == 5
    assert result.precision == pytest.approx(2.5 / 4)
    assert result.recall == pytest.approx(2.5 / 5)
    assert result.f1 == pytest.approx(2 * 0.625 * 0.5 / (0.625 + 0.5))  # 5/9
    assert result.as_dict()["f1"] == 55.56
    everything = score(gold, {"a": "k1", "b": "k2", "c": "x", "d": "x", "e": "x"})
    assert (everything.precision, everything.recall, everything.f1) == pytest.approx(
        (0.4, 0.4, 0.4))  # every instance answered: P = R = F1
    with pytest.raises(DataError, match="not in the gold"):
        score(gold, {"z": "k1"})


def test_nearest_mean_sense() -> None:
    accumulator = SenseAccumulator()
    # one layer, 2-d: sense 1 near the x axis, sense 2 near the y axis
    accumulator.add("bank%1:14:00::", [np.array([1.0, 0.0])])
    accumulator.add("bank%1:14:00::", [np.array([3.0, 1.0])])
    accumulator.add("bank%1:17:01::", [np.array([0.0, 2.0])])
    accumulator.add("bank%2:40:00::", [np.array([1.0, 0.0])])  # a verb: not a noun candidate
    inventory = accumulator.finish()
    assert inventory.counts.tolist() == [2, 1, 1]
    assert inventory.nearest(0, "bank", "n", np.array([0.9, 0.1])) == "bank%1:14:00::"
    assert inventory.nearest(0, "bank", "n", np.array([0.3, 0.9])) == "bank%1:17:01::"
    assert inventory.nearest(0, "bank", "v", np.array([0.0, 1.0])) == "bank%2:40:00::"
    assert inventory.nearest(0, "river", "n", np.array([1.0, 0.0])) is None
    # mean of (1,0),(3,1) is (2,0.5); unit length
    assert np.allclose(inventory.means[0][0], np.array([2.0, 0.5]) / np.hypot(2.0, 0.5))


def test_first_sense_backoff_with_fake_wordnet() -> None:
    fake = FakeWordNet({("river", "n"): ["river%1:17:00::", "river%1:17:01::"],
                        ("bank", "n"): ["Bank%1:14:00::"]})
    first = FirstSense(fake)
    assert first("river", "n") == "river%1:17:00::"
    assert first("bank", "n") == "bank%1:14:00::"  # keys compare lowercased
    assert first("river", "v") is None
    accumulator = SenseAccumulator()
    accumulator.add("bank%1:17:01::", [np.array([0.0, 1.0])])
    inventory = accumulator.finish()
    river = Annotation(0, 1, "river", "n")
    bank = Annotation(0, 1, "bank", "n")
    vector = np.array([1.0, 0.0])
    assert disambiguate(inventory, 0, river, vector, first) == "river%1:17:00::"
    assert disambiguate(inventory, 0, bank, vector, first) == "bank%1:17:01::"  # seen: no backoff
    assert disambiguate(inventory, 0, river, vector, None) is None


def test_sense_key_pos() -> None:
    assert key_lemma_pos("recent%5:00:00:past:00") == ("recent", "a")
    assert key_lemma_pos("Say%2:32:00::") == ("say", "v")
    with pytest.raises(ValueError):
        key_lemma_pos("no-key")


def test_wsd_probe_end_to_end(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    write_semcor(tmp_path / "wsd" / "semcor3.0.tar.gz")
    write_eval_set(tmp_path)
    first = FirstSense(FakeWordNet({("belong_to", "v"): ["belong_to%2:42:00::"],  # right
                                    ("play", "n"): ["play%1:10:03::"],  # right: 2nd gold key
                                    ("recent", "a"): ["recent%5:00:00:new:00"]}))  # wrong
    results = run_wsd_probe(str(tiny_bilm_dir), tmp_path, ["semeval2007"], first)
    row = results["sets"]["semeval2007"]
    assert row["instances"] == 4 and row["covered_by_semcor"] == 3
    # SemCor saw one sense each of play (v), play (n) and recent (a): all right; belong_to
    # backs off to its first sense, also right
    for layer in ("0", "1", "2"):
        assert row["layers"][layer]["f1"] == 100.0
        assert row["layers"][layer]["answered"] == 4
    # first sense alone: play (v) unanswered, 2 of 3 answers right: P 2/3, R 2/4, F1 4/7
    assert row["first_sense"] == {"precision": 66.67, "recall": 50.0, "f1": 57.14,
                                  "correct": 2.0, "answered": 3, "total": 4}
    assert "semeval2007" in format_results(results)


wordnet_missing = wordnet_problem()


@pytest.mark.skipif(wordnet_missing is not None, reason=f"real WordNet: {wordnet_missing}")
def test_real_wordnet_first_sense() -> None:
    first = FirstSense(load_wordnet())
    assert first("play", "n") == "play%1:10:01::"
    assert first("say", "v") == "say%2:32:00::"
    assert first("recent", "a") == "recent%5:00:00:new:00"  # satellites are adjectives too
    assert first("belong_to", "v") == "belong_to%2:42:00::"
    assert first("xyzzy", "n") is None


def test_missing_wordnet_says_why(tmp_path: Path) -> None:
    problem = wordnet_problem(tmp_path)
    assert problem is not None and ("wordnet-base" in problem or "nltk" in problem)
    with pytest.raises(DataError):
        load_wordnet(tmp_path)
