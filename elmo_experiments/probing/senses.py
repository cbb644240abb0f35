"""Sense-annotated sentences shared by SemCor and Raganato's data, and sense-key helpers.

A WordNet sense key is ``lemma%ss_type:lex_filenum:lex_id:head_word:head_id``; ss_type 1 is a
noun, 2 a verb, 3 an adjective, 4 an adverb and 5 an adjective satellite.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KEY_POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # ss_type -> lemma pos
UNIVERSAL_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}  # Raganato's pos attribute


@dataclass(frozen=True)
class Annotation:
    """A tagged word of a sentence: tokens ``start:end``, its lemma, pos (n/v/a/r), and its
    sense keys (SemCor: the tags; Raganato: none, the gold is in the key file)."""

    start: int
    end: int  # exclusive
    lemma: str
    pos: str
    keys: tuple[str, ...] = ()
    id: str = ""


@dataclass
class Sentence:
    """Whitespace-free tokens (multiword expressions split into their words) and annotations."""

    id: str
    tokens: list[str]
    annotations: list[Annotation] = field(default_factory=list)


def normalise_key(key: str) -> str:
    """Sense keys compare lowercased (WordNet writes them in lowercase)."""
    return key.strip().lower()


def key_lemma_pos(key: str) -> tuple[str, str]:
    """(lemma, pos n/v/a/r) of a sense key; ``ValueError`` if it is not one."""
    lemma, sep, rest = key.partition("%")
    if not sep or not lemma or rest[:1] not in KEY_POS:
        raise ValueError(f"not a WordNet sense key: {key!r}")
    return lemma.lower(), KEY_POS[rest[0]]
