"""Writes the embedded CoNLL-2003-format sample (invented sentences, IOB1 tags).

Run from the repository root: ``python reproduction/ner/sample/make_sample.py``. The output is
deterministic; the files are committed so tests and the demo need no generation step.
"""

from __future__ import annotations

import random
from pathlib import Path

PEOPLE = [["Maria", "Lindqvist"], ["Tomas", "Okafor"], ["Jin"], ["Ada", "Brennan"],
          ["Pavel", "Rusu"], ["Lena", "Moreau"], ["Kofi", "Mensah"], ["Ines"], ["Rafael", "Duarte"]]
PLACES = [["Valmora"], ["North", "Esker"], ["Port", "Adley"], ["Brisk"], ["Lake", "Oron"],
          ["Tarvik"], ["Suncrest", "Bay"], ["Old", "Marrow"]]
ORGS = [["Halden", "Rail"], ["Velto", "Bank"], ["Corvane"], ["Oron", "United"],
        ["Tarvik", "City", "Council"], ["Mistral", "Labs"], ["Brisk", "Rovers"]]
MISC = [["Valmoran"], ["Eskerish"], ["Summer", "Cup"], ["Adley", "Open"], ["Oronian"]]
NUMBERS = ["3", "12", "41", "250", "7.5", "1,200", "19"]
DAYS = ["Monday", "Tuesday", "Friday", "Sunday"]

# Each template item: (word or slot, POS, chunk). Slots are PER, LOC, ORG, MISC, NUM, DAY.
TEMPLATES = [
    "PER/NNP/I-NP said/VBD/I-VP on/IN/I-PP DAY/NNP/I-NP that/IN/I-SBAR ORG/NNP/I-NP "
    "would/MD/I-VP open/VB/I-VP an/DT/I-NP office/NN/I-NP in/IN/I-PP LOC/NNP/I-NP ././O",
    "ORG/NNP/I-NP beat/VBD/I-VP ORG/NNP/I-NP NUM/CD/I-NP -/:/O NUM/CD/I-NP in/IN/I-PP "
    "the/DT/I-NP MISC/NNP/I-NP ././O",
    "The/DT/I-NP MISC/JJ/I-NP minister/NN/I-NP PER/NNP/I-NP arrived/VBD/I-VP in/IN/I-PP "
    "LOC/NNP/I-NP on/IN/I-PP DAY/NNP/I-NP ././O",
    "Shares/NNS/I-NP in/IN/I-PP ORG/NNP/I-NP rose/VBD/I-VP NUM/CD/I-NP percent/NN/I-NP ././O",
    "LOC/NNP/I-NP DAY/NNP/I-NP",
    "PER/NNP/I-NP ,/,/O who/WP/I-NP joined/VBD/I-VP ORG/NNP/I-NP last/JJ/I-NP year/NN/I-NP ,/,/O "
    "declined/VBD/I-VP to/TO/I-VP comment/VB/I-VP ././O",
    "Police/NNS/I-NP in/IN/I-PP LOC/NNP/I-NP arrested/VBD/I-VP NUM/CD/I-NP people/NNS/I-NP "
    "after/IN/I-PP the/DT/I-NP MISC/NNP/I-NP ././O",
    "\"/\"/O We/PRP/I-NP are/VBP/I-VP very/RB/I-ADJP pleased/JJ/I-ADJP ,/,/O \"/\"/O "
    "PER/NNP/I-NP told/VBD/I-VP reporters/NNS/I-NP ././O",
    "ORG/NNP/I-NP and/CC/I-NP ORG/NNP/I-NP agreed/VBD/I-VP to/TO/I-VP merge/VB/I-VP ././O",
    "Results/NNS/I-NP of/IN/I-PP the/DT/I-NP MISC/NNP/I-NP :/:/O",
]


def _entity(slot: str, rng: random.Random) -> list[str]:
    pools = {"PER": PEOPLE, "LOC": PLACES, "ORG": ORGS, "MISC": MISC}
    if slot in pools:
        return rng.choice(pools[slot])
    return [rng.choice(NUMBERS if slot == "NUM" else DAYS)]


def sentence(template: str, rng: random.Random) -> list[str]:
    """Lines ``word POS chunk NER`` for one filled template (IOB1: B- only between same type)."""
    lines: list[str] = []
    previous_type = "O"
    for item in template.split(" "):
        word, pos, chunk = item.rsplit("/", 2)
        if word in ("PER", "LOC", "ORG", "MISC"):
            words = _entity(word, rng)
            first = "B" if previous_type == word else "I"
            for i, w in enumerate(words):
                lines.append(f"{w} {pos} {chunk} {first if i == 0 else 'I'}-{word}")
            previous_type = word
        else:
            if word in ("NUM", "DAY"):
                word = _entity(word, rng)[0]
            lines.append(f"{word} {pos} {chunk} O")
            previous_type = "O"
    return lines


def adjacent_same_type(rng: random.Random) -> list[str]:
    """Two adjacent locations, the second marked B-LOC as IOB1 requires."""
    first, second = rng.sample(PLACES, 2)
    lines = [f"{w} NNP I-NP I-LOC" for w in first]
    lines += [f"{w} NNP I-NP {'B' if i == 0 else 'I'}-LOC" for i, w in enumerate(second)]
    return ["Flights NNS I-NP O", "from IN I-PP O", *lines, "resumed VBD I-VP O", ". . O O"]


def write(path: Path, sentences: int, seed: int) -> None:
    rng = random.Random(seed)
    out = ["-DOCSTART- -X- O O", ""]
    for index in range(sentences):
        if index and index % 12 == 0:
            out += ["-DOCSTART- -X- O O", ""]
        lines = adjacent_same_type(rng) if index % 9 == 4 else sentence(rng.choice(TEMPLATES), rng)
        out += [*lines, ""]
    path.write_text("\n".join(out) + "\n", encoding="ascii")


if __name__ == "__main__":
    here = Path(__file__).parent
    write(here / "train.txt", 60, seed=1)
    write(here / "dev.txt", 20, seed=2)
    write(here / "test.txt", 20, seed=3)
