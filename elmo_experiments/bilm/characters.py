"""Character ids of the released biLMs: 50 ids per token, UTF-8 bytes between BOW and EOW."""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

from elmo_experiments.config.registry import register
from elmo_experiments.data.vocabulary import Vocabulary

MAX_CHARACTERS = 50
BOS_CHAR, EOS_CHAR, BOW_CHAR, EOW_CHAR, PAD_CHAR = 256, 257, 258, 259, 260


def _word_ids(payload: list[int]) -> np.ndarray:
    ids = np.full(MAX_CHARACTERS, PAD_CHAR, dtype=np.int64)
    ids[0] = BOW_CHAR
    ids[1 : len(payload) + 1] = payload
    ids[len(payload) + 1] = EOW_CHAR
    return ids + 1  # 0 is reserved for padding tokens


BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"
BOS_IDS = _word_ids([BOS_CHAR])  # (50,)
EOS_IDS = _word_ids([EOS_CHAR])  # (50,)


def token_to_ids(token: str) -> np.ndarray:
    """The 50 shifted ids of one token: BOW, its UTF-8 bytes (at most 48), EOW, PAD...

    The literal tokens ``<S>`` and ``</S>`` get the sentence-boundary ids, as in the released
    tools' vocabularies.
    """
    if token == BOS_TOKEN:
        return BOS_IDS.copy()
    if token == EOS_TOKEN:
        return EOS_IDS.copy()
    return _word_ids(list(token.encode("utf-8", "ignore")[: MAX_CHARACTERS - 2]))


def sentence_to_ids(tokens: list[str]) -> np.ndarray:
    """(tokens, 50) ids without sentence boundaries (the biLM adds BOS/EOS itself)."""
    out = np.empty((len(tokens), MAX_CHARACTERS), dtype=np.int64)
    for row, token in enumerate(tokens):
        out[row] = token_to_ids(token)
    return out


def batch_to_ids(sentences: list[list[str]]) -> torch.Tensor:
    """(batch, max_tokens, 50) ids; padding tokens are all-zero rows."""
    length = max((len(s) for s in sentences), default=0)
    out = np.zeros((len(sentences), length, MAX_CHARACTERS), dtype=np.int64)
    for row, tokens in enumerate(sentences):
        if tokens:
            out[row, : len(tokens)] = sentence_to_ids(tokens)
    return torch.from_numpy(out)


class ElmoCharactersIndexer:
    """Token indexer feeding the ``elmo`` embedder; needs no vocabulary."""

    def count(self, tokens: list[str], counts: dict[str, Counter[str]]) -> None:
        pass

    def index(self, tokens: list[str], vocab: Vocabulary) -> np.ndarray:
        return sentence_to_ids(tokens)

    def pad(self, items: list[np.ndarray], length: int) -> torch.Tensor:
        out = np.zeros((len(items), length, MAX_CHARACTERS), dtype=np.int64)
        for row, ids in enumerate(items):
            out[row, : ids.shape[0]] = ids
        return torch.from_numpy(out)  # (batch, seq, 50)


register("token_indexer", "elmo_characters")(ElmoCharactersIndexer)
