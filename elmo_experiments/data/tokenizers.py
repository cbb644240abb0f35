"""Raw-text tokenisation with spaCy's blank pipeline for a language (rules only; no model
download; ``languages.py``). English unless a function is given another ``language``."""

from __future__ import annotations

import re
from functools import lru_cache

from elmo_experiments.data.languages import DEFAULT_LANGUAGE
from elmo_experiments.data.languages import pipeline as _pipeline

# Treebank escapes for brackets; the biLM reads raw text, where they are plain characters.
PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{",
               "-RCB-": "}"}


def unescape_ptb(token: str) -> str:
    """``-LRB-`` -> ``(`` and the other bracket escapes of treebank tokens; others unchanged."""
    return PTB_ESCAPES.get(token, token)


def tokenize(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """Tokens of ``text`` (whitespace dropped)."""
    return [token.text for token in _pipeline(language).tokenizer(text) if not token.is_space]


@lru_cache(maxsize=8)
def _splitters(split_characters: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """What a token must contain to be split (whitespace or one of ``split_characters``), and
    its pieces: each of ``split_characters`` alone, or a run of other non-whitespace."""
    chars = re.escape(split_characters)
    if not split_characters:
        return re.compile(r"\s"), re.compile(r"\S+")
    return re.compile(rf"[{chars}\s]"), re.compile(rf"[{chars}]|[^{chars}\s]+")


def spacy_words(text: str, language: str = DEFAULT_LANGUAGE) -> list[tuple[str, int]]:
    """spaCy's tokens of ``text`` as ``(token, start)``, whitespace tokens dropped."""
    return [(token.text, token.idx) for token in _pipeline(language).tokenizer(text)
            if not token.is_space]


@lru_cache(maxsize=1 << 16)
def _pieces(word: str, split_characters: str, language: str = DEFAULT_LANGUAGE
            ) -> tuple[tuple[str, int, int], ...]:
    """The tokens one spaCy token that must be split becomes, offsets from its start."""
    _, pieces = _splitters(split_characters)
    out: list[tuple[str, int, int]] = []
    for match in pieces.finditer(word):
        piece, at = match.group(), match.start()
        if len(piece) == 1 or not split_characters:
            out.append((piece, at, at + len(piece)))
            continue
        out.extend((part.text, at + part.idx, at + part.idx + len(part.text))
                   for part in _pipeline(language).tokenizer(piece) if not part.is_space)
    return tuple(out)


def split_token(word: str, start: int, split_characters: str = "",
                language: str = DEFAULT_LANGUAGE) -> list[tuple[str, int, int]]:
    """The ``(token, start, end)`` tokens of one spaCy token ``word`` found at ``start``: each
    of ``split_characters`` inside it a token of its own, the pieces between tokenised by spaCy
    again, whitespace dropped."""
    must_split, _ = _splitters(split_characters)
    if len(word) == 1 or not must_split.search(word):
        return [(word, start, start + len(word))]
    return [(piece, start + a, start + b)
            for piece, a, b in _pieces(word, split_characters, language)]


def tokenize_with_offsets(text: str, split_characters: str = "",
                          language: str = DEFAULT_LANGUAGE) -> list[tuple[str, int, int]]:
    """Tokens of ``text`` as ``(token, start, end)`` character offsets (end exclusive), so that
    ``text[start:end] == token``; whitespace is dropped, also inside a spaCy token.

    Each of ``split_characters`` inside a spaCy token becomes a token of its own, and the
    pieces between are tokenised again (``1830.[n`` with ``"["``: ``1830``, ``.``, ``[``,
    ``n``; ``1990–95`` with ``"–"``: ``1990``, ``–``, ``95``).
    """
    return [token for word, start in spacy_words(text, language)
            for token in split_token(word, start, split_characters, language)]


CHUNK_CHARS = 100_000  # spaCy refuses texts over 1,000,000 characters; stay well below


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, at whitespace where there is
    some (a piece may then end mid-sentence; one without whitespace is cut where it must be)."""
    pieces = []
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size)
        cut = cut if cut > 0 else size
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


def split_sentences(text: str, language: str = DEFAULT_LANGUAGE) -> list[list[str]]:
    """Sentences of ``text``, each a list of tokens (rule-based sentence boundaries). Text
    longer than spaCy takes is split into pieces first (``chunks``)."""
    sentences = []
    for piece in chunks(text):
        for sentence in _pipeline(language)(piece).sents:
            tokens = [token.text for token in sentence if not token.is_space]
            if tokens:
                sentences.append(tokens)
    return sentences
