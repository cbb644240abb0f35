"""SQuAD v1.1's official metric: normalisation, exact match, token F1, the best over gold answers,
the average over a data file's questions, ``elmo-exp score squad`` and the ``squad`` dataset
metric. Passages and questions here are invented."""

from __future__ import annotations

import gzip
import json
import logging
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from in_process import elmo_exp

from elmo_experiments.config.registry import lookup
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.squad.metric import (
    SquadMetric,
    SquadQuestion,
    best_over_answers,
    exact_match_score,
    f1_score,
    normalize_answer,
    question_scores,
    read_predictions,
    read_squad_json,
    score_predictions,
)

ROOT = Path(__file__).resolve().parents[3]


# --- normalisation, EM, F1 by hand -------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("The Cat", "cat"),
    ("An apple", "apple"),
    ("a", ""),
    ("theater", "theater"),              # "the" only as a whole word
    ("the theater and anthem", "theater and anthem"),
    ("U.S.", "us"),                      # punctuation inside a word goes, the word stays joined
    ("don't", "dont"),
    ("the-cat", "thecat"),               # punctuation removed before articles: no boundary left
    ("the_cat", "thecat"),               # "_" is punctuation; removed before the article rule
    ("a.b", "ab"),
    ("“Quoted” — dash", "“quoted” — dash"),  # non-ASCII punctuation stays
    ("  many \t spaces\n here  ", "many spaces here"),
    ("(the) [a] {an}", ""),
    ("!!!", ""),
    ("", ""),
    ("THE END.", "end"),
])
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match() -> None:
    assert exact_match_score("The Eiffel Tower!", "eiffel tower") == 1.0
    assert exact_match_score("Eiffel Tower", "the tower") == 0.0
    assert exact_match_score("", "") == 1.0
    assert exact_match_score("", "the") == 1.0    # both normalise to ''
    assert exact_match_score("", "x") == 0.0


def test_f1_partial_overlap() -> None:
    # pred "the cat sat on mat" -> [cat, sat, on, mat] (4); gold "a cat sat" -> [cat, sat] (2).
    # shared 2: precision 2/4, recall 2/2, F1 = 2 * 0.5 * 1 / 1.5 = 2/3.
    assert f1_score("the cat sat on mat", "a cat sat") == pytest.approx(2 / 3, abs=1e-15)
    # symmetric in precision/recall: swapping gives the same F1
    assert f1_score("a cat sat", "the cat sat on mat") == pytest.approx(2 / 3, abs=1e-15)
    assert f1_score("Cat.", "cat") == 1.0
    assert f1_score("dog", "cat") == 0.0


def test_f1_repeated_tokens() -> None:
    # pred {go: 3, stop: 1} (4 tokens), gold {go: 1, stop: 2} (3 tokens): the intersection is
    # {go: 1, stop: 1}, 2 shared. P = 2/4, R = 2/3, F1 = 2 * (1/2)(2/3) / (1/2 + 2/3) = 4/7.
    assert f1_score("go go go stop", "go stop stop") == pytest.approx(4 / 7, abs=1e-15)
    # pred [x, x] vs gold [x]: 1 shared, P = 1/2, R = 1, F1 = 2/3 (not 1: repeats count).
    assert f1_score("x x", "x") == pytest.approx(2 / 3, abs=1e-15)


def test_empty_and_punctuation_only() -> None:
    assert f1_score("", "cat") == 0.0
    assert f1_score("cat", "") == 0.0
    assert f1_score("", "") == 0.0             # nothing shared: 0, though EM is 1
    assert exact_match_score("!!!", ".") == 1.0
    assert f1_score("!!!", ".") == 0.0
    assert question_scores(".", ["!!!"]) == (1.0, 0.0)


def test_best_over_answers_maximises_em_and_f1_separately() -> None:
    # "." vs "cat": EM 0 F1 0; "." vs "!!!": EM 1 F1 0 -> EM comes from the second gold.
    assert question_scores(".", ["cat", "!!!"]) == (1.0, 0.0)
    # "cat sat" vs "dog": 0; vs "a cat sat down" [cat sat down]: P 1, R 2/3, F1 0.8;
    # vs "cat": P 1/2, R 1, F1 2/3. Best F1 0.8 from the second gold; no exact match.
    exact, f1 = question_scores("cat sat", ["dog", "a cat sat down", "cat"])
    assert exact == 0.0
    assert f1 == pytest.approx(0.8, abs=1e-15)
    assert best_over_answers(f1_score, "cat sat", ["cat"]) == pytest.approx(2 / 3, abs=1e-15)
    assert question_scores("The cat sat", ["dog", "cat sat"]) == (1.0, 1.0)


# --- the dataset average -----------------------------------------------------------------------

def test_score_predictions_missing_counts_and_extra_ignored(caplog) -> None:
    dataset = [SquadQuestion("q1", ("Paris",)),
               SquadQuestion("q2", ("a cat sat", "dog")),
               SquadQuestion("q3", ("blue",))]
    predictions = {"q1": "paris", "q2": "the cat sat on mat", "zzz": "blue"}
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"):
        result = score_predictions(dataset, predictions)
    # q1: 1/1; q2: EM 0, F1 2/3 (see test_f1_partial_overlap); q3: no prediction, 0/0.
    assert result["exact_match"] == pytest.approx(100 / 3, abs=1e-12)
    assert result["f1"] == pytest.approx(100 * (1 + 2 / 3) / 3, abs=1e-12)
    assert list(result) == ["exact_match", "f1"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["1 of 3 questions have no prediction; they score 0"]


def test_score_predictions_all_present_logs_nothing(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"):
        result = score_predictions([SquadQuestion("q", ("x",))], {"q": "x"})
    assert result == {"exact_match": 100.0, "f1": 100.0}
    assert caplog.records == []


# --- an independent re-implementation on random strings ----------------------------------------

ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def _brute_normalize(text: str) -> str:
    lowered = text.lower()
    kept = []
    for char in lowered:
        if char not in ASCII_PUNCTUATION:
            kept.append(char)
    text = "".join(kept)
    # whole-word articles: maximal runs of word characters (letters, digits, "_")
    pieces: list[str] = []
    run = ""
    for char in text:
        if char.isalnum() or char == "_":
            run += char
            continue
        if run:
            pieces.append(" " if run in ("a", "an", "the") else run)
            run = ""
        pieces.append(char)
    if run:
        pieces.append(" " if run in ("a", "an", "the") else run)
    words = []
    word = ""
    for char in "".join(pieces):
        if char.isspace():
            if word:
                words.append(word)
            word = ""
        else:
            word += char
    if word:
        words.append(word)
    return " ".join(words)


def _brute_f1(prediction: str, gold: str) -> float:
    predicted = _brute_normalize(prediction).split(" ") if _brute_normalize(prediction) else []
    remaining = _brute_normalize(gold).split(" ") if _brute_normalize(gold) else []
    gold_count = len(remaining)
    shared = 0
    for token in predicted:
        if token in remaining:
            remaining.remove(token)
            shared += 1
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / gold_count
    return 2 * precision * recall / (precision + recall)


PIECES = ["cat", "Cat", "sat", "theater", "anthem", "a", "A", "an", "An", "the", "The", "THE",
          "U.S.", "don't", "x", "x", "go", "é", "Ånd", "—", "“", "”", "42", "_", *ASCII_PUNCTUATION]
SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n", "\u00a0"]


def _random_text(rng: random.Random) -> str:
    count = rng.randint(0, 8)
    return "".join(rng.choice(PIECES) + rng.choice(SEPARATORS) for _ in range(count))


def test_against_brute_force() -> None:
    rng = random.Random(20160616)
    for _ in range(400):
        prediction, gold = _random_text(rng), _random_text(rng)
        assert normalize_answer(prediction) == _brute_normalize(prediction), repr(prediction)
        assert exact_match_score(prediction, gold) == float(
            _brute_normalize(prediction) == _brute_normalize(gold))
        assert abs(f1_score(prediction, gold) - _brute_f1(prediction, gold)) < 1e-12
    # the dataset average, with several golds per question and some questions unanswered
    dataset, predictions = [], {}
    expected_exact = expected_f1 = 0.0
    for index in range(300):
        golds = tuple(_random_text(rng) for _ in range(rng.randint(1, 4)))
        dataset.append(SquadQuestion(f"q{index}", golds))
        if rng.random() < 0.8:
            guess = rng.choice([*golds, _random_text(rng)])
            predictions[f"q{index}"] = guess
            expected_exact += max(float(_brute_normalize(guess) == _brute_normalize(g))
                                  for g in golds)
            expected_f1 += max(_brute_f1(guess, g) for g in golds)
    result = score_predictions(dataset, predictions)
    assert abs(result["exact_match"] - 100 * expected_exact / 300) < 1e-12
    assert abs(result["f1"] - 100 * expected_f1 / 300) < 1e-12


# --- data files and the command line -----------------------------------------------------------

DATA = {
    "version": "1.1",
    "data": [
        {"title": "Lake_Moravel",
         "paragraphs": [
             {"context": "Lake Moravel lies in the Tarsi valley; its ferry crosses twice a day.",
              "qas": [
                  {"id": "m1", "question": "Where does Lake Moravel lie?",
                   "answers": [{"text": "the Tarsi valley", "answer_start": 21},
                               {"text": "Tarsi valley", "answer_start": 25}]},
                  {"id": "m2", "question": "How often does the ferry cross?",
                   "answers": [{"text": "twice a day", "answer_start": 56}]}]}]},
        {"title": "Quill_engine",
         "paragraphs": [
             {"context": "The Quill engine, built in 1893, burned peat.",
              "qas": [
                  {"id": "q1", "question": "When was the engine built?",
                   "answers": [{"text": "1893", "answer_start": 27}]},
                  {"id": "q2", "question": "What did it burn?",
                   "answers": [{"text": "peat", "answer_start": 40}]}]}]},
    ],
}
PREDICTIONS = {"m1": "Tarsi valley.", "m2": "twice", "q1": "in 1893", "other": "ignored"}
# m1: EM 1 F1 1; m2: [twice] vs [twice day]: P 1, R 1/2, F1 2/3; q1: [in 1893] vs [1893]:
# P 1/2, R 1, F1 2/3; q2: missing, 0. EM = 100 * 1/4 = 25; F1 = 100 * (1 + 4/3) / 4 = 175/3.
EXPECTED = {"exact_match": 25.0, "f1": 100 * (1 + 2 / 3 + 2 / 3) / 4}


def _write(path: Path, value: object) -> Path:
    text = value if isinstance(value, str) else json.dumps(value)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path



def test_read_squad_json(tmp_path: Path) -> None:
    questions = read_squad_json(_write(tmp_path / "dev.json.gz", DATA))
    assert [q.id for q in questions] == ["m1", "m2", "q1", "q2"]
    assert questions[0].answers == ("the Tarsi valley", "Tarsi valley")
    # the .gz is found from the plain name too
    assert read_squad_json(tmp_path / "dev.json") == questions


def test_version_warning(tmp_path: Path, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"):
        read_squad_json(_write(tmp_path / "dev.json", {**DATA, "version": "2.0"}))
    [record] = caplog.records
    assert "expects SQuAD v1.1" in record.getMessage() and "'2.0'" in record.getMessage()


def test_score_squad_command(tmp_path: Path) -> None:
    data = _write(tmp_path / "dev.json.gz", DATA)
    predictions = _write(tmp_path / "predictions.json", PREDICTIONS)
    result = subprocess.run(  # a process of its own: its log's warning reaches stderr
        [sys.executable, "-m", "elmo_experiments", "score", "squad", str(data), str(predictions)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1
    printed = json.loads(result.stdout)
    assert list(printed) == ["exact_match", "f1"]
    assert printed["exact_match"] == EXPECTED["exact_match"]
    assert abs(printed["f1"] - EXPECTED["f1"]) < 1e-12
    assert result.stdout.strip() == json.dumps(EXPECTED)  # full float precision
    assert "1 of 4 questions have no prediction; they score 0" in result.stderr


def _broken(data: dict) -> dict:
    return json.loads(json.dumps(data))


def _without_answers() -> dict:
    data = _broken(DATA)
    del data["data"][1]["paragraphs"][0]["qas"][1]["answers"]
    return data


def _answer_without_text() -> dict:
    data = _broken(DATA)
    data["data"][0]["paragraphs"][0]["qas"][0]["answers"][1] = {"answer_start": 3}
    return data


def _without_id() -> dict:
    data = _broken(DATA)
    del data["data"][1]["paragraphs"][0]["qas"][0]["id"]
    return data


def _without_qas() -> dict:
    data = _broken(DATA)
    del data["data"][0]["paragraphs"][0]["qas"]
    return data


@pytest.mark.parametrize(("data", "message"), [
    ('{"version": "1.1", "data": [', "dev.json:1: not valid JSON"),
    ("[1, 2]", "dev.json: expected an object, got an array"),
    ({"version": "1.1"}, "dev.json: 'data' is missing"),
    (_without_qas(), "dev.json: data[0].paragraphs[0]: 'qas' is missing"),
    (_without_id(), "dev.json: data[1].paragraphs[0].qas[0]: 'id' is missing"),
    (_without_answers(), "dev.json: question q2: 'answers' is missing"),
    (_answer_without_text(), "dev.json: question m1: answers[1]: 'text' is missing"),
])
def test_malformed_data_is_one_line(tmp_path: Path, data: object, message: str) -> None:
    path = _write(tmp_path / "dev.json", data)
    with pytest.raises(DataError) as caught:
        read_squad_json(path)
    assert message in str(caught.value) and str(tmp_path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_malformed_predictions(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"preds\.json: expected a JSON object"):
        read_predictions(_write(tmp_path / "preds.json", ["m1"]))
    with pytest.raises(DataError, match=r"preds\.json: question m2: the prediction is a number"):
        read_predictions(_write(tmp_path / "preds.json", {"m1": "x", "m2": 3}))


def test_score_squad_errors_are_one_line(tmp_path: Path) -> None:
    data = _write(tmp_path / "dev.json", _without_answers())
    predictions = _write(tmp_path / "predictions.json", PREDICTIONS)
    result = elmo_exp("score", "squad", str(data), str(predictions))
    assert result.returncode == 1
    assert result.stderr == f"error: {data}: question q2: 'answers' is missing\n"
    assert result.stdout == ""
    good = _write(tmp_path / "good.json", DATA)
    bad = _write(tmp_path / "bad.json", '{"m1": "x",')
    result = elmo_exp("score", "squad", str(good), str(bad))
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {bad}:1: not valid JSON")
    assert result.stderr.count("\n") == 1
    result = elmo_exp("score", "squad", str(tmp_path / "absent.json"), str(bad))
    assert result.returncode == 1 and "absent.json: no such data file" in result.stderr
    assert result.stderr.count("\n") == 1


# --- the dataset metric ------------------------------------------------------------------------

def test_squad_dataset_metric(tmp_path: Path) -> None:

    entry = lookup("dataset_metric", "squad")
    assert not isinstance(entry, str)
    metric = entry.builder()
    assert isinstance(metric, SquadMetric)
    assert metric.names == ("exact_match", "f1")
    instances = [{"id": q["id"], "answers": [a["text"] for a in q["answers"]]}
                 for article in DATA["data"] for paragraph in article["paragraphs"]
                 for q in paragraph["qas"]]
    records = [{"id": "m1", "answer": "Tarsi valley."}, {"id": "m2", "answer": "twice"},
               {"id": "q1", "answer": "in 1893"}, {"id": "q2", "answer": ""}]
    result = metric.compute(instances, records)
    assert result["exact_match"] == EXPECTED["exact_match"]
    assert abs(result["f1"] - EXPECTED["f1"]) < 1e-12
    path = tmp_path / "out" / "predictions.json"
    metric.write(instances, records, path)
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "m1": "Tarsi valley.", "m2": "twice", "q1": "in 1893", "q2": ""}
    # the written file scores the same through the official route
    data = _write(tmp_path / "dev.json", DATA)
    assert score_predictions(read_squad_json(data), read_predictions(path)) == result
    with pytest.raises(ValueError, match="paired with"):
        metric.compute(instances, list(reversed(records)))


# --- the real dev file -------------------------------------------------------------------------

REAL_DEV = Path(os.environ.get("ELMO_DATA_DIR", "/nonexistent")) / "squad" / "dev-v1.1.json.gz"


@pytest.mark.skipif(not REAL_DEV.is_file(),
                    reason="real SQuAD v1.1 dev not found under $ELMO_DATA_DIR/squad")
def test_real_dev_file(caplog) -> None:
    questions = read_squad_json(REAL_DEV)
    assert len(questions) == 10570
    first = {q.id: q.answers[0] for q in questions}
    assert score_predictions(questions, first) == {"exact_match": 100.0, "f1": 100.0}
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"):
        assert score_predictions(questions, {}) == {"exact_match": 0.0, "f1": 0.0}
    assert "10570 of 10570 questions have no prediction" in caplog.text
    # Empty answers: F1 is 0 everywhere, but EM is 1 where a gold answer normalises to '' too
    # (the dev file's gold answers include '.' for a few questions), as the official script has.
    empty_golds = sum(any(normalize_answer(a) == "" for a in q.answers) for q in questions)
    empty = score_predictions(questions, {q.id: "" for q in questions})
    assert empty["f1"] == 0.0
    assert empty["exact_match"] == pytest.approx(100 * empty_golds / 10570, abs=1e-12)
    assert empty_golds < 10
