"""Token indexers: single ids (with lowercasing), characters (with padding widths), pad shapes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

from elmo_experiments.config.validate import Validator
from elmo_experiments.data.token_indexers import CharactersIndexer, SingleIdIndexer
from elmo_experiments.data.vocabulary import Vocabulary


def build(config: dict) -> object:
    validator = Validator()
    spec = validator.component(config, "token_indexer", "token_indexer")
    assert validator.problems == []
    return spec.build()


def vocab_from(indexer: object, sentences: list[list[str]]) -> Vocabulary:
    counts: dict[str, Counter[str]] = {}
    for sentence in sentences:
        indexer.count(sentence, counts)  # type: ignore[attr-defined]
    return Vocabulary.from_counts(counts)


def test_registry_builds_indexers_with_defaults() -> None:
    single = build({"type": "single_id"})
    assert isinstance(single, SingleIdIndexer)
    assert (single.namespace, single.lowercase_tokens) == ("tokens", False)
    chars = build({"type": "characters", "min_padding_length": 5})
    assert isinstance(chars, CharactersIndexer)
    assert (chars.namespace, chars.min_padding_length, chars.max_word_length) == (
        "token_characters", 5, 50)


def test_single_id_counts_and_indexes() -> None:
    indexer = SingleIdIndexer()
    counts: dict[str, Counter[str]] = {}
    indexer.count(["Bram", "bram", "Bram"], counts)
    assert counts == {"tokens": Counter({"Bram": 2, "bram": 1})}
    vocab = Vocabulary.from_counts(counts)
    ids = indexer.index(["Bram", "bram", "BRAM"], vocab)
    assert ids.dtype == np.int64
    assert ids.tolist() == [vocab.index("tokens", "Bram"), vocab.index("tokens", "bram"), 1]


def test_single_id_lowercases_when_counting_and_indexing() -> None:
    indexer = SingleIdIndexer(namespace="words", lowercase_tokens=True)
    vocab = vocab_from(indexer, [["Bram", "BRAM", "Kell"]])
    assert vocab.tokens("words")[2:] == ["bram", "kell"]
    ids = indexer.index(["bRaM", "KELL", "Nope"], vocab)
    assert ids.tolist() == [2, 3, 1]
    assert indexer.index([], vocab).shape == (0,)


def test_single_id_pad_shape_and_zero_padding() -> None:
    indexer = SingleIdIndexer()
    items = [np.array([5, 6, 7]), np.array([8]), np.array([], dtype=np.int64)]
    padded = indexer.pad(items, 4)
    assert padded.dtype == torch.int64
    assert padded.tolist() == [[5, 6, 7, 0], [8, 0, 0, 0], [0, 0, 0, 0]]


def test_characters_index_width_is_longest_token_or_min_padding() -> None:
    indexer = CharactersIndexer(min_padding_length=3)
    vocab = vocab_from(indexer, [["abcd", "e"]])
    short = indexer.index(["a", "be"], vocab)
    assert short.shape == (2, 3)
    a, b, e = (vocab.index("token_characters", c) for c in "abe")
    assert short.tolist() == [[a, 0, 0], [b, e, 0]]
    long = indexer.index(["abcd", "z"], vocab)
    assert long.shape == (2, 4)
    assert long[1].tolist() == [1, 0, 0, 0]  # unknown character -> OOV
    assert (long[0] > 1).all()


def test_characters_are_case_sensitive_and_truncated_to_max_word_length() -> None:
    indexer = CharactersIndexer(min_padding_length=2, max_word_length=4)
    counts: dict[str, Counter[str]] = {}
    indexer.count(["AbcdefG"], counts)
    assert counts["token_characters"] == Counter("Abcd")
    vocab = Vocabulary.from_counts(counts)
    ids = indexer.index(["AbcdefG", "a"], vocab)
    assert ids.shape == (2, 4)
    assert ids[1, 0] == 1  # lower-case 'a' was never counted
    # min_padding_length wins over a smaller max_word_length
    wide = CharactersIndexer(min_padding_length=6, max_word_length=4)
    assert wide.index(["ab"], vocab).shape == (1, 6)


def test_characters_pad_shape() -> None:
    indexer = CharactersIndexer(min_padding_length=3)
    vocab = vocab_from(indexer, [["alpha", "be", "c"]])
    items = [indexer.index(["alpha", "be"], vocab), indexer.index(["c"], vocab)]
    padded = indexer.pad(items, 4)
    assert padded.shape == (2, 4, 5)
    assert padded.dtype == torch.int64
    assert torch.equal(padded[0, :2], torch.from_numpy(items[0]))
    assert padded[0, 2:].eq(0).all()
    assert torch.equal(padded[1, 0, :3], torch.from_numpy(items[1][0]))
    assert padded[1, 0, 3:].eq(0).all() and padded[1, 1:].eq(0).all()
    # every real token has a non-zero first character (the char CNN relies on it)
    assert (padded[:, :, 0] != 0).sum().item() == 3
