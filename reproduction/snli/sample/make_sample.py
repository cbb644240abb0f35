"""Writes the embedded SNLI-format sample (invented premise/hypothesis pairs, JSON lines).

Run from the repository root: ``python reproduction/snli/sample/make_sample.py``. The output is
deterministic; the files are committed so tests and the demo need no generation step. Like the
real data, each record has ``sentence1/2``, their binary parses, ``gold_label`` and ``pairID``;
a few pairs have the no-consensus label ``-``, which the reader drops.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

# (subject, activity, place): the premise is "<subject> is <activity> <place> ."
SUBJECTS = [["A", "man"], ["A", "woman"], ["Two", "children"], ["An", "old", "man"],
            ["A", "girl"], ["A", "dog"], ["Three", "friends"]]
ACTIVITIES = {
    "playing a guitar": ("making music", "sleeping", "playing a song for a friend"),
    "riding a bike": ("outdoors on a bike", "driving a car", "racing to work"),
    "eating lunch": ("having a meal", "swimming", "eating a sandwich"),
    "reading a book": ("reading", "watching television", "reading a novel for school"),
    "running": ("moving fast", "sitting still", "training for a marathon"),
    "painting a wall": ("working", "dancing", "painting a house blue"),
}
PLACES = ["in the park", "on the street", "near the beach", "at home", "in a small town"]
LABELS = ("entailment", "contradiction", "neutral")


def binary_parse(tokens: list[str]) -> str:
    """A right-branching bracketing, in the format of SNLI's ``sentence*_binary_parse``."""
    if len(tokens) == 1:
        return tokens[0]
    return f"( {tokens[0]} {binary_parse(tokens[1:])} )"


def pair(rng: random.Random, number: int, split: str) -> dict:
    subject = rng.choice(SUBJECTS)
    activity = rng.choice(sorted(ACTIVITIES))
    premise = [*subject, "is" if subject[0] in ("A", "An") else "are", *activity.split(),
               *rng.choice(PLACES).split(), "."]
    index = rng.randrange(3)
    hypothesis = [*subject, premise[len(subject)], *ACTIVITIES[activity][index].split(), "."]
    gold = LABELS[index] if rng.random() > 0.05 else "-"
    return {
        "annotator_labels": [LABELS[index]], "gold_label": gold,
        "pairID": f"sample-{split}-{number}",
        "sentence1": " ".join(premise), "sentence1_binary_parse": binary_parse(premise),
        "sentence2": " ".join(hypothesis), "sentence2_binary_parse": binary_parse(hypothesis),
    }


def main() -> None:
    rng = random.Random(11)
    folder = Path(__file__).parent
    for split, count in (("train", 160), ("dev", 40), ("test", 40)):
        records = [json.dumps(pair(rng, n, split)) for n in range(count)]
        (folder / f"{split}.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
