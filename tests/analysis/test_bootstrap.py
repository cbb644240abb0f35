"""The paired bootstrap: its statistics against a hand-enumerated example, and every metric's
units against the official computation on the resampled test set itself (brute force)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from elmo_experiments.analysis.bootstrap import (
    as_state,
    counts_matrix,
    differences,
    grouped,
    paired_bootstrap,
)
from elmo_experiments.metrics.accuracy import LabelAccuracy
from elmo_experiments.metrics.metric import State, Unit
from elmo_experiments.metrics.span_f1 import SpanF1
from elmo_experiments.tasks.coref.metric import ConllCoref, score_documents
from elmo_experiments.tasks.gap.metric import Example, GapMetric, count, figures
from elmo_experiments.tasks.ner.metric import Conlleval
from elmo_experiments.tasks.squad.metric import SquadMetric, SquadQuestion, score_predictions
from elmo_experiments.tasks.srl.metric import SrlEval, score_props

# Two instances: A gets the first right and the second wrong, B gets both right.
A_UNITS: list[Unit] = [("x", {"correct": 1, "total": 1}), ("y", {"correct": 0, "total": 1})]
B_UNITS: list[Unit] = [("x", {"correct": 1, "total": 1}), ("y", {"correct": 1, "total": 1})]


def accuracy(state: State) -> float:
    return LabelAccuracy().from_state(state)["accuracy"]


def test_the_enumerated_draws_by_hand() -> None:
    # Every draw of 2 from 2, each with probability 1/4: (x, x), (x, y), (y, x), (y, y).
    # A scores 100, 50, 50, 0; B 100 on all; so B - A is 0, 50, 50, 100.
    weights = np.array([[2, 0], [1, 1], [1, 1], [0, 2]], dtype=np.float64)
    drawn = differences(weights, counts_matrix([s for _, s in A_UNITS]),
                        counts_matrix([s for _, s in B_UNITS]), accuracy)
    assert drawn.tolist() == [0.0, 50.0, 50.0, 100.0]


def test_random_draws_approach_the_enumeration() -> None:
    # Whole set: A 50, B 100, difference 50. Exactly: |d* - 50| >= 50 for d* in {0, 100},
    # probability 1/2 (the p-value); the 2.5% and 97.5% quantiles of {0: 1/4, 50: 1/2,
    # 100: 1/4} are 0 and 100.
    result = paired_bootstrap(A_UNITS, B_UNITS, accuracy, "accuracy", samples=20_000, seed=3)
    assert (result.a, result.b, result.difference, result.units) == (50.0, 100.0, 50.0, 2)
    assert result.p_value == pytest.approx(0.5, abs=0.015)
    assert (result.low, result.high) == (0.0, 100.0)
    assert not result.beyond_noise
    again = paired_bootstrap(A_UNITS, B_UNITS, accuracy, "accuracy", samples=20_000, seed=3)
    assert again == result


def test_a_steady_gain_is_beyond_noise_and_a_tie_is_not() -> None:
    # B is right on 40 instances where A is wrong, and they agree on the other 60.
    a = [(f"i{n}", {"correct": int(n >= 40), "total": 1}) for n in range(100)]
    b = [(f"i{n}", {"correct": 1, "total": 1}) for n in range(100)]
    gain = paired_bootstrap(a, b, accuracy, "accuracy", samples=2000)
    assert gain.difference == pytest.approx(40.0) and gain.beyond_noise
    assert gain.p_value == 0.0 and 25 < gain.low < 40 < gain.high < 55
    tie = paired_bootstrap(a, a, accuracy, "accuracy", samples=200)
    assert (tie.difference, tie.low, tie.high, tie.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_units_of_one_name_add_up_and_the_names_must_match() -> None:
    units: list[Unit] = [("d1", {"n": 1, "by": {"x": 2}}), ("d2", {"n": 5}),
                         ("d1", {"n": 3, "by": {"y": 1}})]
    assert grouped(units) == {"d1": {"n": 4, "by": {"x": 2, "y": 1}}, "d2": {"n": 5}}
    paths, matrix = counts_matrix(list(grouped(units).values()))
    assert paths == [("n",), ("by", "x"), ("by", "y")]
    assert matrix.tolist() == [[4, 2, 1], [5, 0, 0]]
    assert as_state(paths, np.array([1.0, 2.0, 3.0])) == {"n": 1.0, "by": {"x": 2.0, "y": 3.0}}
    with pytest.raises(ValueError, match="different units: 'z' is only B's"):
        paired_bootstrap(A_UNITS, [*B_UNITS, ("z", {"correct": 1, "total": 1})], accuracy,
                         "accuracy")


# --- every metric's units against the official figure of the resampled set ------------------


def _draws(names: list[str], count: int = 6, seed: int = 0) -> list[dict[str, int]]:
    """Draws with replacement of as many names as there are, each as name -> times drawn."""
    rng = random.Random(seed)
    draws = []
    for _ in range(count):
        times = dict.fromkeys(names, 0)
        for _ in names:
            times[rng.choice(names)] += 1
        draws.append(times)
    return draws


def _weighted(units: list[Unit], times: dict[str, int]) -> State:
    groups = grouped(units)
    paths, matrix = counts_matrix([groups[name] for name in times])
    return as_state(paths, np.array(list(times.values()), dtype=np.float64) @ matrix)


def _check(units: list[Unit], from_state: Callable[[State], dict[str, float]],
           official: Callable[[list[str]], dict[str, float]], figures: tuple[str, ...]) -> None:
    """For each draw: the figures from the drawn units' counts equal ``official`` on the
    drawn set (the names, each repeated as often as drawn)."""
    names = list(grouped(units))
    for times in _draws(names):
        drawn = [name for name, n in times.items() for _ in range(n)]
        ours, theirs = from_state(_weighted(units, times)), official(drawn)
        for figure in figures:
            assert ours[figure] == pytest.approx(theirs[figure], abs=1e-9), (figure, times)


def _by_unit(units: list[Unit], items: list[Any]) -> Callable[[list[str]], list[Any]]:
    """The items (one per unit, in order) of each drawn name, drawn as often as it is."""
    def select(drawn: list[str]) -> list[Any]:
        return [item for name in drawn for (unit, _), item in zip(units, items, strict=True)
                if unit == name]
    return select


def test_conlleval_units_are_its_sentences() -> None:
    instances = [{"tokens": list("abcd"), "tags": ["B-PER", "I-PER", "O", "B-LOC"]},
                 {"tokens": list("ab"), "tags": ["B-ORG", "O"]},
                 {"tokens": list("abc"), "tags": ["O", "B-PER", "B-PER"]}]
    predictions = [{"tags": ["B-PER", "I-PER", "O", "O"]}, {"tags": ["B-ORG", "B-MISC"]},
                   {"tags": ["O", "B-PER", "I-PER"]}]
    metric = Conlleval("BIO")
    units = metric.units(instances, predictions)
    assert [name for name, _ in units] == ["sentence 0", "sentence 1", "sentence 2"]
    pairs = _by_unit(units, list(zip(instances, predictions, strict=True)))

    def official(drawn: list[str]) -> dict[str, float]:
        # conlleval's one stream over the drawn sentences, as a file of them would be read
        stream = SpanF1(iobes=False)
        stream.update([i["tags"] for i, _ in pairs(drawn)], [p["tags"] for _, p in pairs(drawn)])
        return {f"conlleval_{key}": value for key, value in stream.compute().items()}

    _check(units, metric.from_state, official,
           ("conlleval_f1", "conlleval_precision", "conlleval_recall", "conlleval_accuracy"))


def test_squad_units_are_its_articles() -> None:
    instances = [{"id": "q1", "answers": ["the cat"], "title": "Cats"},
                 {"id": "q2", "answers": ["a dog", "dogs"], "title": "Cats"},
                 {"id": "q3", "answers": ["1848"], "title": "Revolutions"},
                 {"id": "q4", "answers": ["Paris"], "title": "Cities"}]
    predictions = [{"id": "q1", "answer": "cat"}, {"id": "q2", "answer": "dogs"},
                   {"id": "q3", "answer": "in 1848 and 1849"}, {"id": "q4", "answer": "Rome"}]
    metric = SquadMetric()
    units = metric.units(instances, predictions)
    assert list(grouped(units)) == ["Cats", "Revolutions", "Cities"]
    pairs = _by_unit(units, list(zip(instances, predictions, strict=True)))

    def official(drawn: list[str]) -> dict[str, float]:
        # the official script's loop over the drawn questions (a repeated one counts again)
        chosen = pairs(drawn)
        return score_predictions([SquadQuestion(i["id"], tuple(i["answers"])) for i, _ in chosen],
                                 {p["id"]: p["answer"] for _, p in chosen})

    _check(units, metric.from_state, official, ("f1", "exact_match"))


def test_gap_units_are_its_examples() -> None:
    gold = [(True, False, "M"), (False, True, "F"), (False, False, "F"), (True, False, "M")]
    answers = [(True, False), (True, True), (False, False), (False, False)]
    instances = [{"id": f"e{n}", "a_coref": a, "b_coref": b, "gender": g}
                 for n, (a, b, g) in enumerate(gold)]
    predictions = [{"a_coref": a, "b_coref": b} for a, b in answers]
    metric = GapMetric()
    units = metric.units(instances, predictions)
    pairs = _by_unit(units, list(zip(instances, predictions, strict=True)))

    def official(drawn: list[str]) -> dict[str, float]:
        # the scorer's pools over the drawn examples, each drawn copy under its own id
        chosen = pairs(drawn)
        gold = {f"{n}": Example(i["a_coref"], i["b_coref"], i["gender"])
                for n, (i, _) in enumerate(chosen)}
        system = {f"{n}": Example(p["a_coref"], p["b_coref"]) for n, (_, p) in enumerate(chosen)}
        return figures(count(gold, system))

    _check(units, metric.from_state, official, metric.names)


def test_label_accuracy_units_are_its_instances() -> None:
    instances = [{"label": "pos"}, {"label": "neg"}, {"label": "neg"}]
    predictions = [{"label": "pos"}, {"label": "pos"}, {"label": "neg"}]
    units = LabelAccuracy().units(instances, predictions)
    assert [state for _, state in units] == [{"correct": 1, "total": 1},
                                             {"correct": 0, "total": 1},
                                             {"correct": 1, "total": 1}]
    assert LabelAccuracy().from_state({"correct": 2, "total": 3}) == {
        "accuracy": pytest.approx(200 / 3)}
    with pytest.raises(ValueError, match="instance 0: no gold label"):
        LabelAccuracy().units([{"label": None}], [{"label": "pos"}])


def _srl(sentence: int, predicate: int, number: int, gold: list[str], guess: list[str]
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    instance = {"tokens": [f"w{i}" for i in range(len(gold))], "tags": gold,
                "sentence_id": sentence, "predicate_index": predicate,
                "predicate_number": number, "lemma": f"v{predicate}",
                "sentence_length": len(gold)}
    return instance, {"tags": guess}


def test_srl_units_are_its_sentences() -> None:
    pairs = [_srl(0, 1, 0, ["B-A0", "B-V", "B-A1", "I-A1"], ["B-A0", "B-V", "B-A1", "O"]),
             _srl(0, 3, 1, ["O", "B-A0", "O", "B-V"], ["O", "B-A0", "O", "B-V"]),
             _srl(1, 0, 0, ["B-V", "B-A1", "B-AM-TMP"], ["B-V", "B-A2", "B-AM-TMP"]),
             _srl(2, 2, 0, ["B-A0", "I-A0", "B-V"], ["O", "B-A0", "B-V"])]
    metric = SrlEval()
    instances, predictions = [i for i, _ in pairs], [p for _, p in pairs]
    units = metric.units(instances, predictions)
    assert [name for name, _ in units] == ["sentence 0", "sentence 1", "sentence 2"]
    gold, predicted = metric.sentences(instances, predictions)
    sentences = _by_unit(units, list(zip(gold, predicted, strict=True)))

    def official(drawn: list[str]) -> dict[str, float]:
        chosen = sentences(drawn)
        overall = score_props([g for g, _ in chosen], [p for _, p in chosen])["overall"]
        return {f"srl_{figure}": overall[figure] for figure in ("precision", "recall", "f1")}

    _check(units, metric.from_state, official, metric.names)


def test_coref_units_are_its_documents() -> None:
    def document(name: str, tokens: int) -> dict[str, Any]:
        return {"document": [[f"t{i}" for i in range(tokens)]], "document_id": name,
                "part": "0"}

    instances = [{**document("d1", 6), "clusters": [[[0, 0], [2, 2], [4, 5]], [[1, 1], [3, 3]]]},
                 {**document("d2", 4), "clusters": [[[0, 1], [3, 3]]]},
                 {**document("d3", 5), "clusters": [[[0, 0], [1, 1]], [[2, 2], [4, 4]]]}]
    predictions = [{"clusters": [[[0, 0], [2, 2]], [[1, 1], [3, 3], [4, 5]]]},
                   {"clusters": [[[0, 1], [2, 2], [3, 3]]]},
                   {"clusters": [[[0, 0], [4, 4]]]}]
    metric = ConllCoref()
    units = metric.units(instances, predictions)
    assert [name for name, _ in units] == ["d1", "d2", "d3"]
    pairs = _by_unit(units, list(zip(instances, predictions, strict=True)))

    def official(drawn: list[str]) -> dict[str, float]:
        # the scorer's totals over the drawn documents (compute refuses a repeated document)
        chosen = pairs(drawn)
        result = score_documents([i["clusters"] for i, _ in chosen],
                                 [p["clusters"] for _, p in chosen])
        return {"coref_f1": result["conll_f1"], "muc_f1": result["muc"]["f1"],
                "b3_recall": result["b3"]["recall"],
                "ceafe_precision": result["ceafe"]["precision"]}

    assert metric.compute(instances, predictions)["coref_f1"] == pytest.approx(
        official(["d1", "d2", "d3"])["coref_f1"], abs=1e-12)
    _check(units, metric.from_state, official,
           ("coref_f1", "muc_f1", "b3_recall", "ceafe_precision"))
