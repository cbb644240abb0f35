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


def split_sentences(text: str) -> list[list[str]]:
    """Sentences of ``text``, each a list of tokens (rule-based sentence boundaries)."""
    sentences = []
    for sentence in _pipeline()(text).sents:
        tokens = [token.text for token in sentence if not token.is_space]
        if tokens:
            sentences.append(tokens)
    return sentences
