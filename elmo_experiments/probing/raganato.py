"""Raganato et al. (2017)'s all-words WSD framework: data XML, gold keys and the scorer.

``<corpus><text><sentence><wf lemma pos>word</wf><instance id lemma pos>word</instance>...``;
only instances are disambiguated. A gold line is ``id key [key ...]``.

Scoring as the framework's Scorer.java: an answered instance earns, for each of its k
answered keys, 1/k if the key is among the gold keys; precision = earned / answered, recall =
earned / instances in the gold file, F1 = 2PR / (P + R). With one key per answer this is
correct / answered and correct / total; answering every instance gives P = R = F1.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from elmo_experiments.errors import DataError
from elmo_experiments.probing.senses import UNIVERSAL_POS, Annotation, Sentence, normalise_key

EVAL_SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")
EVAL_DIR = "wsd/Evaluation_Datasets"


def eval_files(root: str | Path, name: str) -> tuple[Path, Path]:
    """(data.xml, gold.key.txt) of evaluation set ``name`` under a data root."""
    folder = Path(root) / EVAL_DIR / name
    return folder / f"{name}.data.xml", folder / f"{name}.gold.key.txt"


def read_xml(path: str | Path) -> list[Sentence]:
    """Sentences with one annotation per ``<instance>`` (``keys`` empty: gold is separate)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise DataError(f"{path}: cannot read the WSD XML ({error})") from None
    sentences = []
    for element in root.iter("sentence"):
        sentence = Sentence(element.get("id", ""), [])
        for token in element:
            words = (token.text or "").split() or ["_"]
            start = len(sentence.tokens)
            sentence.tokens.extend(words)
            if token.tag == "instance":
                pos = UNIVERSAL_POS.get(token.get("pos", ""), token.get("pos", "").lower())
                sentence.annotations.append(Annotation(
                    start, len(sentence.tokens), token.get("lemma", "").lower(), pos,
                    id=token.get("id", "")))
        sentences.append(sentence)
    return sentences


def read_keys(path: str | Path) -> dict[str, list[str]]:
    """Instance id -> its gold sense keys (lowercased), in file order."""
    gold: dict[str, list[str]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise DataError(f"{path}: cannot read the key file ({error})") from None
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 2:
            raise DataError(f"{path}:{number}: an instance id without a sense key")
        gold[fields[0]] = [normalise_key(k) for k in fields[1:]]
    return gold


@dataclass(frozen=True)
class WsdScore:
    """Scorer.java's figures (fractions; ``as_dict`` gives percentages)."""

    precision: float
    recall: float
    f1: float
    earned: float
    answered: int
    total: int

    def as_dict(self) -> dict[str, float | int]:
        return {"precision": round(100 * self.precision, 2), "recall": round(100 * self.recall, 2),
                "f1": round(100 * self.f1, 2), "correct": round(self.earned, 3),
                "answered": self.answered, "total": self.total}


def score(gold: Mapping[str, Sequence[str]],
          answers: Mapping[str, str | Sequence[str] | None]) -> WsdScore:
    """Scores ``answers`` (id -> a key, several keys, or None: unanswered) against ``gold``."""
    earned, answered = 0.0, 0
    for instance, answer in answers.items():
        if answer is None or (not isinstance(answer, str) and not answer):
            continue
        if instance not in gold:
            raise DataError(f"answer for {instance!r}, which is not in the gold key file")
        keys = [answer] if isinstance(answer, str) else list(answer)
        gold_keys = {normalise_key(k) for k in gold[instance]}
        earned += sum(normalise_key(k) in gold_keys for k in keys) / len(keys)
        answered += 1
    precision = earned / answered if answered else 0.0
    recall = earned / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return WsdScore(precision, recall, f1, earned, answered, len(gold))
