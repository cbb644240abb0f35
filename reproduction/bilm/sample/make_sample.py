"""Writes the embedded LM sample corpus (invented sentences): train.txt (one tokenised sentence
per line), story.txt (running text in paragraphs, for the ``raw`` format) and heldout.txt.

Run from the repository root: ``python reproduction/bilm/sample/make_sample.py``; deterministic.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

NAMES = ["Maria", "Tomas", "Ada", "Pavel", "Lena", "Kofi", "Ines", "Rafael", "the captain",
         "the old woman", "my brother", "the teacher", "a young clerk", "the doctor"]
PLACES = ["the harbour", "the market", "the station", "the garden", "the village", "the city",
          "the house on the hill", "the river", "the school", "the church"]
VERBS = ["walked to", "looked at", "remembered", "left", "found", "described", "painted",
         "visited", "cleaned", "watched"]
THINGS = ["a letter", "the boat", "an old map", "the bread", "a blue coat", "the key",
          "two chairs", "the newspaper", "a small dog", "the money"]
TIMES = ["in the morning", "after dinner", "on Sunday", "before the rain", "at noon",
         "last winter", "every evening", "in 1990"]
TEMPLATES = [
    "{name} {verb} {place} {time} .",
    "{name} said that {name2} had {thing} .",
    "When {name} {verb} {place} , {name2} was waiting with {thing} .",
    "\" Where is {thing} ? \" asked {name} .",
    "{time} , {name} and {name2} {verb} {place} .",
    "Nobody knew why {name} kept {thing} in {place} .",
    "{name} {verb} {thing} , but {name2} did not .",
]


def sentence(rng: random.Random) -> str:
    text = rng.choice(TEMPLATES).format(
        name=rng.choice(NAMES), name2=rng.choice(NAMES), verb=rng.choice(VERBS),
        place=rng.choice(PLACES), thing=rng.choice(THINGS), time=rng.choice(TIMES))
    return text[0].upper() + text[1:]


def main() -> None:
    here = Path(__file__).parent
    rng = random.Random(7)
    (here / "train.txt").write_text("".join(sentence(rng) + "\n" for _ in range(600)))
    (here / "heldout.txt").write_text("".join(sentence(rng) + "\n" for _ in range(60)))
    paragraphs = []
    for _ in range(30):
        words = " ".join(sentence(rng) for _ in range(4)).replace(" .", ".").replace(" ,", ",")
        words = words.replace(" ?", "?").replace('" ', '"').replace(' "', '"')
        paragraphs.append("\n".join(textwrap.wrap(words, 70)))
    (here / "story.txt").write_text("\n\n".join(paragraphs) + "\n")


if __name__ == "__main__":
    main()
