"""SQuAD v1.1's official evaluation: answer normalisation, exact match and token F1, each the
best over a question's gold answers, averaged over every question of the data file (a question
without a prediction scores 0), as the official ``evaluate-v1.1.py`` computes them."""

from __future__ import annotations

import json
import logging
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.data.files import atomic_write, load_data_json, resolve_data_path
from elmo_experiments.errors import DataError
from elmo_experiments.metrics.metric import State, Unit, total

logger = logging.getLogger("elmo_experiments")

EXPECTED_VERSION = "1.1"
PUNCTUATION = frozenset(string.punctuation)  # ASCII only: "—" and "“" stay
ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower case, drop ASCII punctuation, drop the words a/an/the, collapse whitespace."""
    text = text.lower()
    text = "".join(char for char in text if char not in PUNCTUATION)
    text = ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match_score(prediction: str, gold: str) -> float:
    """1.0 when both normalise to the same string (two empty ones included), else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str) -> float:
    """Token F1 of the normalised answers (bag-of-tokens overlap); 0.0 when nothing is shared,
    which includes two empty answers."""
    predicted = normalize_answer(prediction).split()
    golden = normalize_answer(gold).split()
    same = sum((Counter(predicted) & Counter(golden)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(golden)
    return (2 * precision * recall) / (precision + recall)


def best_over_answers(score: Callable[[str, str], float], prediction: str,
                      answers: Iterable[str]) -> float:
    """The best ``score(prediction, gold)`` over a question's gold answers."""
    return max(score(prediction, gold) for gold in answers)


def question_scores(prediction: str, answers: Sequence[str]) -> tuple[float, float]:
    """(exact match, F1) of one question, each maximised over its gold answers separately."""
    return (best_over_answers(exact_match_score, prediction, answers),
            best_over_answers(f1_score, prediction, answers))


@dataclass(frozen=True)
class SquadQuestion:
    """One question of a data file: its id and all its gold answer texts (in file order)."""

    id: str
    answers: tuple[str, ...]


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {dict: "an object", list: "an array", str: "a string",
            type(None): "null"}.get(type(value), type(value).__name__)


def _field(record: Any, key: str, kind: type, where: str) -> Any:
    """``record[key]``, which must be a ``kind``; ``where`` starts the error message."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected an object, got {_json_kind(record)}")
    if key not in record:
        raise DataError(f"{where}: {key!r} is missing")
    value = record[key]
    if not isinstance(value, kind):
        wanted = {list: "an array", str: "a string", dict: "an object"}[kind]
        raise DataError(f"{where}: {key!r} is {_json_kind(value)}, not {wanted}")
    return value


def read_squad_json(path: str | Path) -> list[SquadQuestion]:
    """Every question of a SQuAD v1.1 file (``.json`` or ``.json.gz``), article by article,
    paragraph by paragraph. A version other than 1.1 is a warning; malformed JSON or a missing
    field is a one-line ``DataError`` naming the file and, once known, the question id."""
    resolved = resolve_data_path(path)
    top = load_data_json(resolved)
    name = str(resolved)
    articles = _field(top, "data", list, name)
    version = top.get("version")
    if version != EXPECTED_VERSION:
        logger.warning("%s: evaluation expects SQuAD v%s, but the file says version %r",
                       name, EXPECTED_VERSION, version)
    questions = []
    for a, article in enumerate(articles):
        paragraphs = _field(article, "paragraphs", list, f"{name}: data[{a}]")
        for p, paragraph in enumerate(paragraphs):
            where = f"{name}: data[{a}].paragraphs[{p}]"
            for q, qa in enumerate(_field(paragraph, "qas", list, where)):
                question_id = _field(qa, "id", str, f"{where}.qas[{q}]")
                where_q = f"{name}: question {question_id}"
                answers = _field(qa, "answers", list, where_q)
                if not answers:
                    raise DataError(f"{where_q}: 'answers' is empty")
                texts = tuple(_field(answer, "text", str, f"{where_q}: answers[{i}]")
                              for i, answer in enumerate(answers))
                questions.append(SquadQuestion(question_id, texts))
    return questions


def read_predictions(path: str | Path) -> dict[str, str]:
    """An official predictions file: a JSON object question id -> answer text (``.gz`` too)."""
    resolved = resolve_data_path(path)
    predictions = load_data_json(resolved)
    if not isinstance(predictions, dict):
        raise DataError(f"{resolved}: expected a JSON object (question id -> answer text), got "
                        f"{_json_kind(predictions)}")
    for question_id, answer in predictions.items():
        if not isinstance(answer, str):
            raise DataError(f"{resolved}: question {question_id}: the prediction is "
                            f"{_json_kind(answer)}, not a string")
    return predictions


def score_predictions(dataset: Iterable[SquadQuestion],
                      predictions: Mapping[str, str]) -> dict[str, float]:
    """``exact_match`` and ``f1`` (percentages) over every question of ``dataset``: a question
    without a prediction scores 0 and still counts; predictions for other ids are ignored."""
    exact = f1 = 0.0
    total = missing = 0
    for question in dataset:
        total += 1
        if question.id not in predictions:
            missing += 1
            continue
        question_exact, question_f1 = question_scores(predictions[question.id],
                                                      question.answers)
        exact += question_exact
        f1 += question_f1
    if missing:
        logger.warning("%d of %d questions have no prediction; they score 0", missing, total)
    if total == 0:
        return {"exact_match": 0.0, "f1": 0.0}
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def score_files(data_path: str | Path, predictions_path: str | Path) -> dict[str, float]:
    """``score_predictions`` of a predictions file against a SQuAD v1.1 data file."""
    return score_predictions(read_squad_json(data_path), read_predictions(predictions_path))


class SquadMetric:
    """SQuAD v1.1's exact match and F1 (percentages) over an evaluation pass: each instance has
    its question ``id`` and gold ``answers`` (texts), each prediction its ``id`` and ``answer``.
    ``write`` writes the official predictions file (question id -> answer text)."""

    names = ("exact_match", "f1")
    primary = "f1"
    unit = "article"

    def units(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
              ) -> list[Unit]:
        """One unit per article (``title``; the question id where there is none): each
        question adds its exact match and F1 (0 or 1, and 0 to 1) and counts once."""
        units = []
        for instance, record in zip(instances, predictions, strict=True):
            if record["id"] != instance["id"]:
                raise ValueError(f"prediction for question {record['id']} paired with "
                                 f"question {instance['id']}")
            question_exact, question_f1 = question_scores(record["answer"],
                                                          list(instance["answers"]))
            article = instance.get("title") or f"question {instance['id']}"
            units.append((str(article), {"exact_match": question_exact, "f1": question_f1,
                                         "questions": 1}))
        return units

    def from_state(self, state: State) -> dict[str, float]:
        count = state.get("questions", 0)
        if count == 0:
            return {"exact_match": 0.0, "f1": 0.0}
        return {"exact_match": 100.0 * state["exact_match"] / count,
                "f1": 100.0 * state["f1"] / count}

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        return self.from_state(total(self.units(instances, predictions)))

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        answers = {str(record["id"]): str(record["answer"]) for record in predictions}
        text = json.dumps(answers, ensure_ascii=False) + "\n"
        atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


register("dataset_metric", "squad")(SquadMetric)
