"""Raw-text tokenisation with spaCy's blank English pipeline (rules only; no model download)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _pipeline() -> Any:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


# Treebank escapes for brackets; the biLM reads raw text, where they are plain characters.
PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{",
               "-RCB-": "}"}


def unescape_ptb(token: str) -> str:
    """``-LRB-`` -> ``(`` and the other bracket escapes of treebank tokens; others unchanged."""
    return PTB_ESCAPES.get(token, token)


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` (whitespace dropped)."""
    return [token.text for token in _pipeline().tokenizer(text) if not token.is_space]


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


def split_sentences(text: str) -> list[list[str]]:
    """Sentences of ``text``, each a list of tokens (rule-based sentence boundaries). Text
    longer than spaCy takes is split into pieces first (``chunks``)."""
    sentences = []
    for piece in chunks(text):
        for sentence in _pipeline()(piece).sents:
            tokens = [token.text for token in sentence if not token.is_space]
            if tokens:
                sentences.append(tokens)
    return sentences
