"""Writes the embedded German NER sample (invented sentences and names, written for this
project) in the CoNLL-2003 column layout: ``word - - NER`` (POS and chunk columns unused),
IOB1 tags, ``-DOCSTART-`` lines. It trains with a biLM pretrained on reproduction/bilm/sample/de
(``dataset_reader.language: 'de'`` for ``predict --text "..."``).

Run from the repository root: ``python reproduction/ner/sample/de/make_sample.py``; deterministic.
"""

from __future__ import annotations

import random
from pathlib import Path

ENTITIES = {
    "PER": [["Anna", "Berger"], ["Lukas"], ["Greta", "Kessler"], ["Jonas", "Brandt"], ["Mira"],
            ["Tobias", "Wendt"], ["Paula", "Haas"], ["Emil"]],
    "LOC": [["Talheim"], ["Bad", "Ostrau"], ["Neuwalden"], ["Seefurt"], ["Kleinbrück"],
            ["Obermark"], ["Rotenfels"]],
    "ORG": [["Ostrauer", "Bank"], ["Talwerk"], ["FC", "Seefurt"], ["Stadtrat", "Neuwalden"],
            ["Brandt", "Logistik"], ["Nordbahn"]],
    "MISC": [["Talheimer"], ["Seefurter"], ["Sommerpokal"], ["Neuwaldener"], ["Herbstmesse"]],
}
DAYS = ["Montag", "Dienstag", "Freitag", "Sonntag"]
NUMBERS = ["3", "12", "41", "250", "7,5", "1.200"]
# Words; PER, LOC, ORG and MISC are entity slots, DAY and NUM plain words.
TEMPLATES = [
    "PER sagte am DAY , dass ORG ein Büro in LOC eröffnen werde .",
    "ORG schlug ORG mit NUM : NUM im MISC .",
    "Der MISC Minister PER kam am DAY in LOC an .",
    "Die Aktien von ORG stiegen um NUM Prozent .",
    "LOC , DAY",
    "PER , der im letzten Jahr zu ORG kam , wollte nichts dazu sagen .",
    "Die Polizei in LOC nahm nach der MISC NUM Personen fest .",
    "„ Wir sind sehr zufrieden “ , sagte PER den Reportern .",
    "ORG und ORG wollen sich zusammenschließen .",
    "Ergebnisse der MISC :",
    "PER wohnt seit NUM Jahren in LOC .",
]


def sentence(template: str, rng: random.Random) -> list[str]:
    """Lines ``word - - NER`` of one filled template (IOB1: B- only between the same type)."""
    lines: list[str] = []
    previous = "O"
    for word in template.split(" "):
        if word in ENTITIES:
            first = "B" if previous == word else "I"
            lines += [f"{w} - - {first if i == 0 else 'I'}-{word}"
                      for i, w in enumerate(rng.choice(ENTITIES[word]))]
            previous = word
            continue
        word = {"DAY": rng.choice(DAYS), "NUM": rng.choice(NUMBERS)}.get(word, word)
        lines.append(f"{word} - - O")
        previous = "O"
    return lines


def write(path: Path, sentences: int, seed: int) -> None:
    rng = random.Random(seed)
    out = ["-DOCSTART- - - O", ""]
    for index in range(sentences):
        if index and index % 12 == 0:
            out += ["-DOCSTART- - - O", ""]
        out += [*sentence(TEMPLATES[index % len(TEMPLATES)] if index < len(TEMPLATES)
                          else rng.choice(TEMPLATES), rng), ""]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    here = Path(__file__).parent
    write(here / "train.txt", 60, seed=1)
    write(here / "dev.txt", 20, seed=2)
    write(here / "test.txt", 20, seed=3)
