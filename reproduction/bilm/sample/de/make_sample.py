"""Writes the embedded German LM sample corpus (invented sentences, written for this project):
text.txt (running text in paragraphs, for the ``raw`` format with ``language: 'de'``) and
heldout.txt (running text too).

Run from the repository root: ``python reproduction/bilm/sample/de/make_sample.py``; deterministic.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

NAMES = ["Anna", "Lukas", "Frau Berger", "Herr Kessler", "Greta", "Jonas", "Mira", "Tobias",
         "Oma Hilde", "Kapitän Brandt", "Paula", "Emil"]
PLACES = ["im Garten", "am Hafen", "auf dem Markt", "in der Stadt", "im Dorf", "am Bahnhof",
          "in der Schule", "an der Brücke", "im Wald", "in der Küche", "am See"]
DESTINATIONS = ["zum Hafen", "zum Markt", "in die Stadt", "ins Dorf", "zum Bahnhof",
                "in die Schule", "zur Brücke", "in den Wald", "in die Küche", "an den See"]
THINGS = [("einen Brief", "der Brief"), ("das Boot", "das Boot"),
          ("eine alte Karte", "die alte Karte"), ("das Brot", "das Brot"),
          ("einen blauen Mantel", "der blaue Mantel"), ("den Schlüssel", "der Schlüssel"),
          ("zwei Stühle", "der Stuhl"), ("die Zeitung", "die Zeitung"),
          ("einen kleinen Hund", "der kleine Hund"), ("das Geld", "das Geld"),
          ("ein rotes Fahrrad", "das rote Fahrrad"), ("eine Tasse Tee", "der Tee")]
VERBS = [("fand", "gefunden"), ("suchte", "gesucht"), ("kaufte", "gekauft"), ("malte", "gemalt"),
         ("verkaufte", "verkauft"), ("beschrieb", "beschrieben"), ("reparierte", "repariert"),
         ("vergaß", "vergessen"), ("brachte", "gebracht"), ("sah", "gesehen")]
MOVES = ["ging", "fuhr", "lief", "kam"]
TIMES = ["am Morgen", "nach dem Abendessen", "am Sonntag", "vor dem Regen", "zu Mittag",
         "im letzten Winter", "jeden Abend", "im Jahr 1990", "gestern", "heute früh"]
MONTHS = ["Januar", "März", "Mai", "Juli", "Oktober", "Dezember"]
TEMPLATES = [
    "{Time} {move} {name} {dest}.",
    "{name} {verb} {thing} {place}.",
    "{name} sagte, dass {name2} {thing} {participle} hatte.",
    "Als {name} {place} war, wartete {name2} schon lange.",
    "„{Thing_nom} ist weg“, sagte {name}.",
    "Am {day}. {month} {move} {name} {dest}.",
    "Niemand wusste, warum {name} {thing} {place} aufbewahrte.",
    "{name} {verb} {thing}, aber {name2} nicht.",
    "{Time} {verb} {name} {thing}.",
    "{name} und {name2} wohnten lange {place}.",
    "Wir trafen {name} {time} {place}.",
    "Hat {name} wirklich {thing} {participle}?",
]


def sentence(rng: random.Random) -> str:
    """One filled template, its first letter capitalised."""
    thing, thing_nom = rng.choice(THINGS)
    verb, participle = rng.choice(VERBS)
    time = rng.choice(TIMES)
    text = rng.choice(TEMPLATES).format(
        name=rng.choice(NAMES), name2=rng.choice(NAMES), place=rng.choice(PLACES),
        dest=rng.choice(DESTINATIONS), thing=thing, thing_nom=thing_nom, verb=verb,
        participle=participle, move=rng.choice(MOVES), time=time,
        Time=time[0].upper() + time[1:], Thing_nom=thing_nom[0].upper() + thing_nom[1:],
        day=rng.randint(1, 28), month=rng.choice(MONTHS))
    return text[0].upper() + text[1:]


def paragraphs(rng: random.Random, count: int, size: int) -> str:
    """``count`` paragraphs of ``size`` sentences, wrapped at 70 characters."""
    return "\n\n".join("\n".join(textwrap.wrap(" ".join(sentence(rng) for _ in range(size)), 70))
                       for _ in range(count)) + "\n"


def main() -> None:
    here = Path(__file__).parent
    rng = random.Random(11)
    (here / "text.txt").write_text(paragraphs(rng, 100, 4), encoding="utf-8")
    (here / "heldout.txt").write_text(paragraphs(rng, 10, 4), encoding="utf-8")


if __name__ == "__main__":
    main()
