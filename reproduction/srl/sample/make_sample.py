"""Writes the embedded CoNLL-2005-format SRL sample: invented simple English sentences (no text
comes from any corpus) with PropBank-style roles written for them.

Run from the repository root: ``python reproduction/srl/sample/make_sample.py``. The output is
deterministic; the files are committed so tests and the demo need no generation step. Columns
as in the CoNLL-2005 combined files: word, POS, full parse (a placeholder ``(S1(S*`` ...
``*))`` around the sentence), named entities, verb sense (``01``; ``-`` in test, as in the real
test files), target lemma (``-`` for non-predicates), then one Start-End props column per
predicate in sentence order. Every file is read back with the ``srl_conll2005`` reader.

A template is ``word/POS`` tokens, with slots (PER, PLACE, THING, DAY) filled from the lists
below, and per predicate its lemma and one role per template token (``-``: none); a slot's
role covers all its filler's words, and equal neighbouring roles make one argument.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

PEOPLE = ["Mara", "Tomas Okafor", "Jin", "Ada Brennan", "Pavel", "Lena Moreau", "Kofi", "Ines",
          "Rafael Duarte"]
PLACES = ["Valmora", "North Esker", "Port Adley", "Brisk", "Lake Oron", "Tarvik"]
THINGS = [("the red box", "DT JJ NN"), ("a letter", "DT NN"), ("the keys", "DT NNS"),
          ("an old map", "DT JJ NN"), ("bread", "NN"), ("the small lamp", "DT JJ NN"),
          ("two chairs", "CD NNS"), ("a basket of apples", "DT NN IN NNS")]
DAYS = ["Monday", "Tuesday", "Friday", "Sunday"]

Template = tuple[str, list[tuple[str, str]]]  # tokens, [(lemma, roles)]

NO_PREDICATE = [
    ("What/WP a/DT lovely/JJ morning/NN !/.", []),
    ("Weather/NN report/NN for/IN DAY/NNP :/:", []),
    ("Yes/UH ./.", []),
]
CONTINUATION = [  # C-A1: "[A1 The plan] , [A0 she] [V said] , [C-A1 would fail]"
    ("The/DT plan/NN ,/, PER/NNP said/VBD ,/, would/MD fail/VB ./.",
     [("say", "A1 A1 - A0 V - C-A1 C-A1 -"),
      ("fail", "A1 A1 - - - - AM-MOD V -")]),
    ("The/DT letter/NN ,/, PER/NNP believed/VBD ,/, had/VBD been/VBN lost/VBN in/IN PLACE/NNP ./.",
     [("believe", "A1 A1 - A0 V - C-A1 C-A1 C-A1 C-A1 C-A1 -"),
      ("lose", "A1 A1 - - - - - - V AM-LOC AM-LOC -")]),
    ("The/DT results/NNS ,/, the/DT report/NN says/VBZ ,/, were/VBD good/JJ ./.",
     [("say", "A1 A1 - A0 A0 V - C-A1 C-A1 -")]),
]
REFERENCE = [  # R-A0 / R-A1 / R-AM-LOC: relative pronouns
    ("The/DT farmer/NN who/WP grew/VBD the/DT corn/NN sold/VBD it/PRP in/IN PLACE/NNP ./.",
     [("grow", "A0 A0 R-A0 V A1 A1 - - - - -"),
      ("sell", "A0 A0 A0 A0 A0 A0 V A1 AM-LOC AM-LOC -")]),
    ("PER/NNP ,/, who/WP writes/VBZ books/NNS ,/, lives/VBZ in/IN PLACE/NNP ./.",
     [("write", "A0 - R-A0 V A1 - - - - -"),
      ("live", "A0 A0 A0 A0 A0 - V AM-LOC AM-LOC -")]),
    ("The/DT children/NNS who/WP live/VBP near/IN the/DT river/NN often/RB swim/VBP there/RB "
     "in/IN summer/NN ./.",
     [("live", "A0 A0 R-A0 V AM-LOC AM-LOC AM-LOC - - - - - -"),
      ("swim", "A0 A0 A0 A0 A0 A0 A0 AM-TMP V AM-LOC AM-TMP AM-TMP -")]),
    ("Slowly/RB ,/, the/DT boat/NN that/WDT PER/NNP built/VBD reached/VBD the/DT far/JJ "
     "shore/NN ./.",
     [("build", "- - A1 A1 R-A1 A0 V - - - - -"),
      ("reach", "AM-MNR - A0 A0 A0 A0 A0 V A1 A1 A1 -")]),
    ("After/IN the/DT long/JJ meeting/NN ended/VBD ,/, PER/NNP and/CC PER/NNP drove/VBD "
     "slowly/RB to/TO PLACE/NNP ,/, where/WRB they/PRP ate/VBD dinner/NN together/RB ./.",
     [("end", "- A1 A1 A1 V - - - - - - - - - - - - - - -"),
      ("drive", "AM-TMP AM-TMP AM-TMP AM-TMP AM-TMP - A0 A0 A0 V AM-MNR AM-DIR AM-DIR - - - - "
                "- - -"),
      ("eat", "- - - - - - - - - - - - AM-LOC - R-AM-LOC A0 V A1 AM-MNR -")]),
]
OTHERS = [
    ("PER/NNP gave/VBD PER/NNP THING/NN on/IN DAY/NNP ./.",
     [("give", "A0 V A2 A1 AM-TMP AM-TMP -")]),
    ("PER/NNP will/MD not/RB sell/VB THING/NN ./.",
     [("sell", "A0 AM-MOD AM-NEG V A1 -")]),
    ("PER/NNP quickly/RB opened/VBD the/DT door/NN and/CC walked/VBD into/IN the/DT "
     "garden/NN ./.",
     [("open", "A0 AM-MNR V A1 A1 - - - - - -"),
      ("walk", "A0 - - - - - V AM-DIR AM-DIR AM-DIR -")]),
    ("However/RB ,/, the/DT train/NN left/VBD PLACE/NNP late/RB ./.",
     [("leave", "AM-DIS - A0 A0 V A1 AM-TMP -")]),
    ("PER/NNP wanted/VBD to/TO visit/VB PLACE/NNP before/IN the/DT winter/NN ./.",
     [("want", "A0 V A1 A1 A1 A1 A1 A1 -"),
      ("visit", "A0 - - V A1 AM-TMP AM-TMP AM-TMP -")]),
    ("It/PRP rained/VBD ./.", [("rain", "- V -")]),
    ("PER/NNP picked/VBD up/RP THING/NN from/IN the/DT station/NN ./.",  # a two-token V
     [("pick", "A0 V V A1 A2 A2 A2 -")]),
    ("Because/IN the/DT road/NN was/VBD closed/VBN ,/, PER/NNP stayed/VBD at/IN home/NN ./.",
     [("close", "- A1 A1 - V - - - - - -"),
      ("stay", "AM-CAU AM-CAU AM-CAU AM-CAU AM-CAU - A0 V AM-LOC AM-LOC -")]),
    ("PER/NNP told/VBD PER/NNP that/IN the/DT shop/NN had/VBD closed/VBN early/RB ./.",
     [("tell", "A0 V A2 A1 A1 A1 A1 A1 A1 -"),
      ("close", "- - - - A1 A1 - V AM-TMP -")]),
    ("Tomorrow/NN PER/NNP may/MD bring/VB THING/NN to/IN the/DT meeting/NN ./.",
     [("bring", "AM-TMP A0 AM-MOD V A1 A2 A2 A2 -")]),
    ("The/DT cat/NN slept/VBD ./.", [("sleep", "A0 A0 V -")]),
    ("PER/NNP does/VBZ not/RB like/VB rain/NN ,/, but/CC PER/NNP loves/VBZ it/PRP ./.",
     [("like", "A0 - AM-NEG V A1 - - - - - -"),
      ("love", "- - - - - - - A0 V A1 -")]),
    ("Did/VBD PER/NNP find/VB THING/NN ?/.", [("find", "- A0 V A1 -")]),
    ("The/DT old/JJ bridge/NN was/VBD repaired/VBN by/IN workers/NNS last/JJ year/NN ./.",
     [("repair", "A1 A1 A1 - V A0 A0 AM-TMP AM-TMP -")]),
    ("PER/NNP promised/VBD to/TO call/VB PER/NNP on/IN DAY/NNP ./.",
     [("promise", "A0 V A1 A1 A1 A1 A1 -"),
      ("call", "A0 - - V A1 AM-TMP AM-TMP -")]),
    ("PER/NNP asked/VBD PER/NNP to/TO help/VB them/PRP carry/VB THING/NN home/NN ./.",
     [("ask", "A0 V A2 A1 A1 A1 A1 A1 A1 -"),
      ("help", "- - A0 - V A2 A1 A1 A1 -"),
      ("carry", "- - - - - A0 V A1 AM-DIR -")]),
    ("In/IN PLACE/NNP ,/, people/NNS say/VBP that/IN the/DT lake/NN never/RB freezes/VBZ ,/, "
     "but/CC this/DT year/NN it/PRP froze/VBD twice/RB ./.",
     [("say", "AM-LOC AM-LOC - A0 V A1 A1 A1 A1 A1 - - - - - - - -"),
      ("freeze", "- - - - - - A1 A1 AM-TMP V - - - - - - - -"),
      ("freeze", "- - - - - - - - - - - - AM-TMP AM-TMP A1 V AM-TMP -")]),
    ("PER/NNP laughed/VBD ./.", [("laugh", "A0 V -")]),
    ("PER/NNP carefully/RB wrapped/VBD THING/NN in/IN paper/NN so/IN that/IN it/PRP would/MD "
     "not/RB break/VB on/IN the/DT way/NN to/TO PLACE/NNP ./.",
     [("wrap", "A0 AM-MNR V A1 A2 A2 AM-PNC AM-PNC AM-PNC AM-PNC AM-PNC AM-PNC AM-PNC AM-PNC "
               "AM-PNC AM-PNC AM-PNC -"),
      ("break", "- - - - - - - - A1 AM-MOD AM-NEG V AM-LOC AM-LOC AM-LOC AM-LOC AM-LOC -")]),
]
TEMPLATES: list[Template] = [*NO_PREDICATE, *CONTINUATION, *REFERENCE, *OTHERS]
MUST = [NO_PREDICATE[0], CONTINUATION[0], REFERENCE[0]]  # in every split


def _fill(slot: str, rng: random.Random, used: set[str]) -> tuple[list[str], list[str], str]:
    """A slot's words, their POS tags and their named-entity type ('' for none)."""
    if slot == "THING":
        words, tags = rng.choice(THINGS)
        return words.split(), tags.split(), ""
    pool, kind = {"PER": (PEOPLE, "PER"), "PLACE": (PLACES, "LOC"), "DAY": (DAYS, "")}[slot]
    name = rng.choice([p for p in pool if p not in used])
    used.add(name)
    return name.split(), ["NNP"] * len(name.split()), kind


def _brackets(labels: list[str]) -> list[str]:
    """Start-End cells of per-token labels (``-``: none; equal neighbours: one phrase)."""
    cells = []
    for i, label in enumerate(labels):
        opens = label != "-" and (i == 0 or labels[i - 1] != label)
        closes = label != "-" and (i == len(labels) - 1 or labels[i + 1] != label)
        cells.append(("(" + label if opens else "") + "*" + (")" if closes else ""))
    return cells


def sentence(template: Template, rng: random.Random, senses: bool) -> list[list[str]]:
    """The rows (columns) of one filled template."""
    items = template[0].split(" ")
    frames = [(lemma, roles.split(" ")) for lemma, roles in template[1]]
    for lemma, roles in frames:
        if len(roles) != len(items):
            raise ValueError(f"{template[0]!r}: {lemma}: {len(roles)} roles, {len(items)} tokens")
        verb = [i for i, role in enumerate(roles) if role == "V"]
        if not verb or verb != list(range(verb[0], verb[-1] + 1)):
            raise ValueError(f"{template[0]!r}: {lemma}: not one V argument")
    words, tags, entities, expanded = [], [], [], []
    used: set[str] = set()
    for index, item in enumerate(items):
        word, pos = item.rsplit("/", 1)
        if word in ("PER", "PLACE", "THING", "DAY"):
            filled, filled_tags, kind = _fill(word, rng, used)
        else:
            filled, filled_tags, kind = [word], [pos], ""
        words += filled
        tags += filled_tags
        entities += [kind or "-"] * len(filled)
        expanded += [index] * len(filled)
    frames.sort(key=lambda frame: frame[1].index("V"))
    targets = ["-"] * len(words)
    props = []
    for lemma, roles in frames:
        labels = [roles[i] for i in expanded]
        targets[labels.index("V")] = lemma
        props.append(_brackets(labels))
    parse = ["*"] * len(words)
    parse[0] = "(S1(S" + parse[0]
    parse[-1] += "))"
    ne = _brackets(entities)
    return [[words[i], tags[i], parse[i], ne[i],
             "01" if senses and targets[i] != "-" else "-", targets[i],
             *(column[i] for column in props)] for i in range(len(words))]


def write(path: Path, count: int, seed: int, senses: bool = True) -> None:
    rng = random.Random(seed)
    rest = [t for t in TEMPLATES if t not in MUST]
    rng.shuffle(rest)
    chosen = [*MUST, *(rest[i % len(rest)] for i in range(count - len(MUST)))]
    rng.shuffle(chosen)
    out = []
    for template in chosen:
        rows = sentence(template, rng, senses)
        widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
        out += [" ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                .rstrip() for row in rows]
        out.append("")
    path.write_text("\n".join(out) + "\n", encoding="ascii")


def check(path: Path, count: int) -> None:
    """Read ``path`` back with the reader: every sentence, V and BIO tag as written."""
    from elmo_experiments.tasks.srl.reader import SrlReader
    from elmo_experiments.tasks.srl.tags import bio_problem

    reader = SrlReader({})
    instances = reader.read(path)
    assert len(reader.sentences) == count, path
    assert any(not s.predicates for s in reader.sentences), path
    for instance in instances:
        assert bio_problem(instance["tags"]) is None, instance
        assert instance["tags"][instance["predicate_index"]] == "B-V", instance
    labels = {t[2:] for i in instances for t in i["tags"] if t != "O"}
    assert {"C-A1", "R-A0", "AM-TMP", "AM-MOD"} <= labels, (path, labels)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parents[2]))
    for name, count, seed in (("train", 60, 1), ("dev", 20, 2), ("test", 20, 3)):
        write(here / f"{name}.txt", count, seed, senses=name != "test")
        check(here / f"{name}.txt", count)
