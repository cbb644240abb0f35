"""Writes the embedded SST-format sample (invented review sentences, a label 0-4 on every node).

Run from the repository root: ``python reproduction/sst5/sample/make_sample.py``. The output is
deterministic; the files are committed so tests and the demo need no generation step. Each
word has a sentiment score; a phrase's label follows the sum of its words' scores, so a
model can learn something from the sample.
"""

from __future__ import annotations

import random
from pathlib import Path

WORDS = {
    "superb": 2, "wonderful": 2, "brilliant": 2, "moving": 1, "charming": 1, "funny": 1,
    "clever": 1, "warm": 1, "dull": -1, "clumsy": -1, "tedious": -1, "flat": -1,
    "awful": -2, "dreadful": -2, "unwatchable": -2, "pointless": -2,
}
SUBJECTS = [["The", "film"], ["This", "movie"], ["The", "script"], ["Its", "cast"],
            ["The", "ending"], ["The", "director", "'s", "debut"], ["The", "score"]]
VERBS = [["is"], ["feels"], ["seems"], ["turns", "out"], ["remains"]]
LINKS = [["and"], [",", "yet"], ["but"], ["if", "somewhat"]]
TAILS = [["from", "start", "to", "finish"], ["for", "most", "of", "its", "length"],
         ["in", "places"], []]


def label(score: int) -> str:
    return str(min(4, max(0, 2 + (score > 0) + (score > 2) - (score < 0) - (score < -2))))


def tree(tokens: list[str], scores: list[int]) -> tuple[str, int]:
    """A right-branching binarised tree over ``tokens``; returns (text, summed score)."""
    if len(tokens) == 1:
        return f"({label(scores[0])} {tokens[0]})", scores[0]
    left, left_score = tree(tokens[:1], scores[:1])
    right, right_score = tree(tokens[1:], scores[1:])
    total = left_score + right_score
    return f"({label(total)} {left} {right})", total


def sentence(rng: random.Random) -> str:
    tokens = [*rng.choice(SUBJECTS), *rng.choice(VERBS)]
    words = rng.sample(sorted(WORDS), rng.choice([1, 2]))
    tokens.append(words[0])
    if len(words) == 2:
        tokens += [*rng.choice(LINKS), words[1]]
    tokens += [*rng.choice(TAILS), "."]
    text, _ = tree(tokens, [WORDS.get(t, 0) for t in tokens])
    return text


def main() -> None:
    rng = random.Random(7)
    folder = Path(__file__).parent
    for name, count in (("train", 160), ("dev", 40), ("test", 40)):
        lines = [sentence(rng) for _ in range(count)]
        (folder / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
