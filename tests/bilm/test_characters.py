"""Character ids of the released biLMs: 50 shifted ids per token, boundary tokens, padding."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from elmo_experiments.bilm.characters import (
    BOS_IDS,
    EOS_IDS,
    MAX_CHARACTERS,
    ElmoCharactersIndexer,
    batch_to_ids,
    sentence_to_ids,
    token_to_ids,
)
from elmo_experiments.config.validate import Validator
from elmo_experiments.data.vocabulary import Vocabulary

# Every id below is already shifted by +1: BOW 259, EOW 260, PAD 261, BOS char 257, EOS char 258.
BOW, EOW, PAD = 259, 260, 261


def expected_ids(payload: list[int]) -> list[int]:
    """The shifted ids of a word whose (unshifted) byte payload is ``payload``."""
    ids = [BOW, *(b + 1 for b in payload), EOW]
    return ids + [PAD] * (MAX_CHARACTERS - len(ids))


def test_ascii_token() -> None:
    ids = token_to_ids("abc")
    assert ids.shape == (50,) and ids.dtype == np.int64
    assert ids.tolist() == expected_ids([97, 98, 99])
    assert ids[:6].tolist() == [259, 98, 99, 100, 260, 261]


def test_token_uses_utf8_bytes() -> None:
    assert token_to_ids("é").tolist() == expected_ids([0xC3, 0xA9])
    assert token_to_ids("日本").tolist() == expected_ids(list("日本".encode()))


def test_empty_token_is_bow_eow_only() -> None:
    assert token_to_ids("").tolist() == expected_ids([])


@pytest.mark.parametrize("length", [47, 48, 49, 60])
def test_long_tokens_keep_at_most_48_bytes(length: int) -> None:
    ids = token_to_ids("x" * length).tolist()
    kept = min(length, 48)
    assert ids == expected_ids([ord("x")] * kept)
    assert ids[kept + 1] == EOW
    assert len(ids) == 50


def test_multibyte_truncation_cuts_bytes_not_characters() -> None:
    token = "é" * 30  # 60 bytes
    assert token_to_ids(token).tolist() == expected_ids(list(token.encode())[:48])


def test_ids_are_in_the_shifted_range() -> None:
    for token in ["a", "Zürich", "x" * 80, "<S>", "</S>", "\u2603", ""]:
        ids = token_to_ids(token)
        assert ids.min() >= 1 and ids.max() <= 261, token


def test_boundary_ids() -> None:
    assert BOS_IDS.tolist() == [BOW, 257, EOW] + [PAD] * 47
    assert EOS_IDS.tolist() == [BOW, 258, EOW] + [PAD] * 47


def test_boundary_literals_map_to_boundary_ids() -> None:
    assert np.array_equal(token_to_ids("<S>"), BOS_IDS)
    assert np.array_equal(token_to_ids("</S>"), EOS_IDS)
    # only the exact literals: other spellings are ordinary words
    assert token_to_ids("<s>").tolist() == expected_ids(list(b"<s>"))
    assert token_to_ids("<S>x").tolist() == expected_ids(list(b"<S>x"))


def test_boundary_ids_are_returned_as_copies() -> None:
    ids = token_to_ids("<S>")
    ids[:] = 0
    assert BOS_IDS[0] == BOW
    assert token_to_ids("<S>")[0] == BOW


def test_sentence_to_ids_has_no_boundaries() -> None:
    ids = sentence_to_ids(["The", "cat", "<S>"])
    assert ids.shape == (3, 50) and ids.dtype == np.int64
    assert np.array_equal(ids[0], token_to_ids("The"))
    assert np.array_equal(ids[2], BOS_IDS)
    assert sentence_to_ids([]).shape == (0, 50)


def test_batch_to_ids_pads_with_zero_rows() -> None:
    sentences = [["a", "b", "c"], [], ["hello"]]
    ids = batch_to_ids(sentences)
    assert isinstance(ids, torch.Tensor) and ids.dtype == torch.int64
    assert ids.shape == (3, 3, 50)
    assert torch.equal(ids[0], torch.from_numpy(sentence_to_ids(["a", "b", "c"])))
    assert not ids[1].any()
    assert torch.equal(ids[2, 0], torch.from_numpy(token_to_ids("hello")))
    assert not ids[2, 1:].any()
    mask = (ids > 0).any(dim=2)
    assert mask.sum(dim=1).tolist() == [3, 0, 1]


def test_batch_to_ids_of_nothing() -> None:
    assert batch_to_ids([]).shape == (0, 0, 50)
    assert batch_to_ids([[], []]).shape == (2, 0, 50)


def test_indexer_from_the_registry_needs_no_vocabulary() -> None:
    validator = Validator()
    spec = validator.component({"type": "elmo_characters"}, "token_indexer", "token_indexer")
    assert validator.problems == []
    indexer = spec.build()
    assert isinstance(indexer, ElmoCharactersIndexer)
    counts: dict[str, Counter[str]] = {}
    indexer.count(["a", "b"], counts)
    assert counts == {}
    vocab = Vocabulary()
    sentences = [["The", "cat", "sat"], ["Hi"], []]
    indexed = [indexer.index(s, vocab) for s in sentences]
    assert np.array_equal(indexed[0], sentence_to_ids(sentences[0]))
    padded = indexer.pad(indexed, 4)
    assert padded.shape == (3, 4, 50) and padded.dtype == torch.int64
    assert torch.equal(padded[:, :3], batch_to_ids(sentences))
    assert not padded[:, 3].any()


def test_indexer_rejects_unknown_parameters() -> None:
    validator = Validator()
    validator.component({"type": "elmo_characters", "lowercase": True}, "token_indexer", "x")
    assert validator.problems and "x.lowercase: unknown parameter" in validator.problems[0]
