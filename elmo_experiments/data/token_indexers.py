"""Token indexers: turn a sentence's tokens into ids for one embedder, and pad a batch of them."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Protocol

import numpy as np
import torch

from elmo_experiments.config.registry import NON_NEGATIVE, Bounds, Size, register
from elmo_experiments.data.vocabulary import Vocabulary


class TokenIndexer(Protocol):
    """Counts vocabulary items, indexes one sentence, and pads a batch into a tensor."""

    def count(self, tokens: list[str], counts: dict[str, Counter[str]]) -> None: ...

    def index(self, tokens: list[str], vocab: Vocabulary) -> np.ndarray: ...

    def pad(self, items: list[np.ndarray], length: int) -> torch.Tensor: ...


def _normalise(token: str, lowercase: bool) -> str:
    return token.lower() if lowercase else token


class SingleIdIndexer:
    """One id per token from a vocabulary namespace; shape (tokens,)."""

    def __init__(self, namespace: str = "tokens", lowercase_tokens: bool = False) -> None:
        self.namespace = namespace
        self.lowercase_tokens = lowercase_tokens

    def count(self, tokens: list[str], counts: dict[str, Counter[str]]) -> None:
        counts.setdefault(self.namespace, Counter()).update(
            _normalise(t, self.lowercase_tokens) for t in tokens
        )

    def index(self, tokens: list[str], vocab: Vocabulary) -> np.ndarray:
        return np.fromiter(
            (vocab.index(self.namespace, _normalise(t, self.lowercase_tokens)) for t in tokens),
            dtype=np.int64,
            count=len(tokens),
        )

    def pad(self, items: list[np.ndarray], length: int) -> torch.Tensor:
        out = np.zeros((len(items), length), dtype=np.int64)
        for row, ids in enumerate(items):
            out[row, : len(ids)] = ids
        return torch.from_numpy(out)  # (batch, seq)


class CharactersIndexer:
    """Character ids per token; shape (tokens, characters), padded to ``min_padding_length``."""

    def __init__(
        self,
        namespace: str = "token_characters",
        min_padding_length: Annotated[int, Bounds(*NON_NEGATIVE)] = 3,
        max_word_length: Size = 50,
    ) -> None:
        self.namespace = namespace
        self.min_padding_length = min_padding_length
        self.max_word_length = max_word_length

    def count(self, tokens: list[str], counts: dict[str, Counter[str]]) -> None:
        counter = counts.setdefault(self.namespace, Counter())
        for token in tokens:
            counter.update(token[: self.max_word_length])

    def index(self, tokens: list[str], vocab: Vocabulary) -> np.ndarray:
        width = max([self.min_padding_length, *(len(t) for t in tokens)])
        width = min(width, max(self.max_word_length, self.min_padding_length))
        out = np.zeros((len(tokens), width), dtype=np.int64)
        for row, token in enumerate(tokens):
            for col, char in enumerate(token[:width]):
                out[row, col] = vocab.index(self.namespace, char)
        return out

    def pad(self, items: list[np.ndarray], length: int) -> torch.Tensor:
        width = max(item.shape[1] for item in items)
        out = np.zeros((len(items), length, width), dtype=np.int64)
        for row, ids in enumerate(items):
            out[row, : ids.shape[0], : ids.shape[1]] = ids
        return torch.from_numpy(out)  # (batch, seq, characters)


register("token_indexer", "single_id")(SingleIdIndexer)
register("token_indexer", "characters")(CharactersIndexer)
