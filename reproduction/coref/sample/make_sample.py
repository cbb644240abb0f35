"""Writes the embedded coreference sample: short invented stories (no text comes from LitBank
or any other corpus) with the coreference written for them, in LitBank's CoNLL layout.

Run from the repository root: ``python reproduction/coref/sample/make_sample.py``. The output is
deterministic; the files are committed so tests and the demo need no generation step. Layout as
in LitBank's ``.conll`` files: ``#begin document (NAME); part 0``, then one token per line in 13
TAB-separated columns (document, part ``0``, word number, word, eight ``_`` placeholders, the
coreference column: empty where a token has none), a blank line after each sentence, and
``#end document``. Every file is read back with the ``coref_conll2012`` reader and checked.

A sentence is written with its mentions marked: ``[3`` opens a mention of entity 3 before the
next word, ``3]`` closes the innermost open mention of entity 3 (so ``[4 [1 his 1] sister 4]``
nests). Every entity is annotated, singletons too, as LitBank does.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

Story = tuple[str, list[str]]  # document name, marked-up sentences

TRAIN: list[Story] = [
    ("s01_the_lamp_at_harrow", [
        "[1 Mara Vell 1] lived at the edge of [2 Harrow 2] , in [3 a stone house by [4 the "
        "river 4] 3] .",
        "Every evening [1 she 1] lit [5 the old lamp 5] in [6 [1 her 1] window 6] .",
        "[7 [1 Her 1] brother Tomas 7] worked on [8 the ferry 8] .",
        "\" Why do [1 you 1] keep [5 that lamp 5] burning ? \" [7 he 7] asked [1 her 1] one "
        "night .",
        "[1 Mara 1] said that [9 [10 their 10] father 9] had once been lost on [4 the river 4] .",
        "[9 He 9] had found [11 [2 Harrow 2] 's little harbour 11] only because [5 the lamp 5] "
        "was lit .",
        "[7 Tomas 7] laughed , but [7 he 7] did not argue .",
        "After that , [7 he 7] carried oil for [5 it 5] from [12 the shop in [2 the village 2] "
        "12] every week .",
    ]),
    ("s02_the_clockmakers_apprentice", [
        "[1 Old Ezra Pike 1] mended clocks in [2 a narrow shop on [3 Quill Street 3] 2] .",
        "[4 [1 His 1] apprentice 4] was a quiet girl from [5 the hills 5] .",
        "[4 She 4] swept [2 the shop 2] each morning before [1 Ezra 1] woke .",
        "One day [6 a stranger from [7 the city 7] 6] brought in a broken watch .",
        "\" Can [1 you 1] mend this by Friday ? \" [6 he 6] asked .",
        "[1 Ezra 1] shook [1 his 1] head , but [4 Lina 4] said [4 she 4] would try .",
        "[4 She 4] worked all night beside [1 [4 her 4] sleeping master 1] .",
        "In the morning [6 the stranger 6] returned , and [6 he 6] paid [4 the girl 4] twice "
        "the price .",
        "[1 Ezra 1] never learned how [4 she 4] had done it .",
    ]),
    ("s03_the_ferry_on_lake_oron", [
        "[1 Captain Rafe Dunmore 1] ran [2 the only ferry on [3 Lake Oron 3] 2] .",
        "[2 It 2] was slow and flat , and [1 he 1] loved [2 it 2] .",
        "[4 [1 Rafe 1] 's daughter 4] kept the accounts .",
        "[4 She 4] wanted to sail to [5 the far shore 5] , where [6 [4 her 4] mother 6] had "
        "been born .",
        "\" [7 We 7] can not leave [3 the lake 3] , \" [1 [4 her 4] father 1] said .",
        "So [4 the girl 4] saved [4 her 4] wages for three summers .",
        "At last [4 she 4] bought [8 a small boat of [4 her 4] own 8] and crossed .",
        "[1 Rafe 1] watched [8 it 8] from [9 the pier 9] until [8 it 8] vanished .",
    ]),
]

DEV: list[Story] = [
    ("s04_snow_at_north_esker", [
        "[1 The Moreau family 1] lived in [2 North Esker 2] , [2 a village in [3 the mountains "
        "3] 2] .",
        "[4 Lena Moreau 4] was the eldest child .",
        "Each winter [4 she 4] walked [5 [4 her 4] brothers 5] to [6 the school in [7 the "
        "valley 7] 6] .",
        "[5 The boys 5] complained about the cold , but [4 Lena 4] only laughed .",
        "One morning [8 the road 8] was buried under snow .",
        "[4 She 4] led [5 them 5] along [9 the ridge 9] instead , and [5 they 5] arrived "
        "before [10 the teacher 10] .",
        "[10 He 10] asked how [5 they 5] had come , and [4 Lena 4] pointed at [3 the mountains "
        "3] .",
    ]),
    ("s05_the_letter_from_port_adley", [
        "[1 Jin 1] found a letter under the door of [2 [1 his 1] flat 2] .",
        "[3 The writer 3] signed [3 herself 3] only as \" [3 a friend from [4 Port Adley 4] "
        "3] \" .",
        "[1 Jin 1] had not been to [4 Port Adley 4] in ten years .",
        "[1 He 1] remembered [3 [1 his 1] old neighbour 3] , [3 Ada Brennan 3] , who had moved "
        "there .",
        "So [1 he 1] took [5 the night train 5] to [6 the coast 6] .",
        "[3 Ada 3] was waiting at [7 the station 7] .",
        "\" [3 I 3] hoped [1 you 1] would come , \" [3 she 3] said .",
    ]),
]

TEST: list[Story] = [
    ("s06_two_bakers", [
        "[1 Pavel 1] and [2 Ines 2] kept [3 the bakery on [4 Market Lane 4] 3] .",
        "[1 Pavel 1] baked the bread , and [2 Ines 2] sold it .",
        "[5 [2 Her 2] cousin 5] came from [6 Brisk 6] to help in [3 the shop 3] .",
        "[5 He 5] was clumsy and dropped a tray on [5 his 5] first day .",
        "[1 Pavel 1] wanted to send [5 him 5] home , but [2 Ines 2] refused .",
        "\" [5 He 5] will learn , \" [2 she 2] said , and [5 the boy 5] did .",
        "By spring [7 the whole street 7] came to [3 the bakery 3] for [5 his 5] cakes .",
    ]),
    ("s07_the_lighthouse_at_tarvik", [
        "[1 Kofi 1] kept [2 the lighthouse at [3 Tarvik 3] 2] for forty years .",
        "[1 He 1] lived there with [4 [1 his 1] sister 4] , [4 Amara 4] .",
        "Every night [4 she 4] climbed [2 the tower 2] to light the lamp .",
        "[5 Ships 5] passing [3 Tarvik 3] steered by [2 its 2] beam .",
        "One winter [6 a fishing boat 6] struck the rocks below [2 the light 2] .",
        "[1 Kofi 1] and [4 Amara 4] rowed out and brought [7 the crew 7] ashore .",
        "[7 The men 7] stayed in [8 [9 the keepers 9] ' house 8] until the storm ended .",
    ]),
]

SPLITS = {"train": TRAIN, "dev": DEV, "test": TEST}
PLACEHOLDERS = 8  # LitBank's columns 5-12: no POS, parse, speaker, ...
PRONOUNS = {"he", "she", "him", "her", "his", "herself", "it", "its", "they", "them",
            "their", "we", "i", "you"}
_OPEN, _CLOSE = re.compile(r"\[(\d+)"), re.compile(r"(\d+)\]")

Mention = tuple[int, int, str]  # first word, last word (inclusive), entity


def parse(markup: str) -> tuple[list[str], list[Mention]]:
    """A marked-up sentence's words and its mentions, in the order they close."""
    words: list[str] = []
    pending: list[str] = []
    open_mentions: dict[str, list[int]] = {}
    mentions: list[Mention] = []
    for item in markup.split():
        if _OPEN.fullmatch(item):
            pending.append(item[1:])
        elif _CLOSE.fullmatch(item):
            entity = item[:-1]
            if pending or not open_mentions.get(entity):
                raise ValueError(f"{markup!r}: {item!r} closes no mention (or an empty one)")
            mentions.append((open_mentions[entity].pop(), len(words) - 1, entity))
        else:
            for entity in pending:
                open_mentions.setdefault(entity, []).append(len(words))
            pending = []
            words.append(item)
    if pending or any(open_mentions.values()):
        raise ValueError(f"{markup!r}: a mention is never closed")
    return words, mentions


def cells(words: list[str], mentions: list[Mention]) -> list[str]:
    """The coreference column: per word, its openings (outermost first), one-word mentions,
    then its closings (innermost first), joined by ``|``; empty for none, as in LitBank."""
    opens: list[list[str]] = [[] for _ in words]
    singles: list[list[str]] = [[] for _ in words]
    closes: list[list[str]] = [[] for _ in words]
    for start, end, entity in sorted(mentions, key=lambda m: (m[0], -m[1])):
        if start == end:
            singles[start].append(f"({entity})")
        else:
            opens[start].append(f"({entity}")
    for start, end, entity in mentions:  # in closing order: innermost first
        if start != end:
            if f"({entity}" in opens[end]:
                raise ValueError(f"{' '.join(words)!r}: entity {entity} closes and opens at "
                                 f"word {end}, which reads ambiguously")
            closes[end].append(f"{entity})")
    return ["|".join(o + s + c) for o, s, c in zip(opens, singles, closes, strict=True)]


def document_lines(name: str, sentences: list[str]) -> list[str]:
    """One document in LitBank's layout."""
    lines = [f"#begin document ({name}); part 0"]
    for markup in sentences:
        words, mentions = parse(markup)
        for number, (word, cell) in enumerate(zip(words, cells(words, mentions), strict=True)):
            lines.append("\t".join([name, "0", str(number), word, *["_"] * PLACEHOLDERS, cell]))
        lines.append("")
    lines.append("#end document")
    return lines


def write(path: Path, stories: list[Story]) -> None:
    lines = [line for name, sentences in stories for line in document_lines(name, sentences)]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def expected_clusters(sentences: list[str]) -> list[list[list[int]]]:
    """The document's clusters from its markup, as the reader gives them."""
    clusters: dict[str, list[list[int]]] = {}
    offset = 0
    for markup in sentences:
        words, mentions = parse(markup)
        for start, end, entity in mentions:
            clusters.setdefault(entity, []).append([offset + start, offset + end])
        offset += len(words)
    return sorted(sorted(spans) for spans in clusters.values())


def check(path: Path, stories: list[Story]) -> None:
    """Read ``path`` back with the reader: every document, word and cluster as written, and
    what the sample must show (nesting, singletons, pronouns, longer chains)."""
    from elmo_experiments.tasks.coref.reader import CorefReader

    for line in path.read_text(encoding="ascii").splitlines():
        assert not line or line.startswith("#") or line.count("\t") == 12, (path, line)
    instances = CorefReader({}).read(path)
    assert len(instances) == len(stories) >= 2, path
    for instance, (name, sentences) in zip(instances, stories, strict=True):
        assert 5 <= len(sentences) <= 15, name
        assert instance["document_id"] == name and instance["part"] == "0", name
        assert instance["document"] == [parse(s)[0] for s in sentences], name
        assert instance["speakers"] is None and instance["genre"] is None, name
        clusters = instance["clusters"]
        assert clusters == expected_clusters(sentences), name
        assert any(len(c) == 1 for c in clusters), f"{name}: no singleton"
        assert any(len(c) >= 3 for c in clusters), f"{name}: no entity of 3+ mentions"
        words = [w for s in instance["document"] for w in s]
        assert any(s == e and words[s].lower() in PRONOUNS for c in clusters
                   for s, e in c), f"{name}: no pronoun"
        spans = [tuple(m) for c in clusters for m in c]
        assert any(a[0] <= b[0] and b[1] <= a[1] and a != b for a in spans for b in spans), \
            f"{name}: no nested mention"


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parents[2]))
    for split, stories in SPLITS.items():
        write(here / f"{split}.conll", stories)
        check(here / f"{split}.conll", stories)
