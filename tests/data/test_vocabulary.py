"""Vocabulary namespaces, padding/OOV, min_count and max size, and the save/load round trip."""

from __future__ import annotations

import errno
from collections import Counter
from pathlib import Path

import pytest

from elmo_experiments.data.vocabulary import OOV, PADDING, Vocabulary, is_padded
from elmo_experiments.errors import DataError, WriteError


def test_label_namespaces_are_not_padded() -> None:
    assert is_padded("tokens")
    assert is_padded("token_characters")
    assert not is_padded("labels")
    assert not is_padded("ner_tags")
    assert not is_padded("pos_labels")


def test_padded_namespace_reserves_padding_and_oov() -> None:
    vocab = Vocabulary()
    assert vocab.add("tokens", "zib") == 2
    assert vocab.add("tokens", "zab") == 3
    assert vocab.add("tokens", "zib") == 2
    assert vocab.tokens("tokens") == [PADDING, OOV, "zib", "zab"]
    assert vocab.index("tokens", PADDING) == 0
    assert vocab.index("tokens", "never-seen") == 1
    assert vocab.token("tokens", 3) == "zab"
    assert vocab.size("tokens") == 4


def test_label_namespace_starts_at_zero_and_rejects_unknown_labels() -> None:
    vocab = Vocabulary()
    assert vocab.add("labels", "U-PER") == 0
    assert vocab.add("labels", "O") == 1
    assert vocab.size("labels") == 2
    assert vocab.index("labels", "O") == 1
    with pytest.raises(DataError) as info:
        vocab.index("labels", "B-XYZ")
    message = str(info.value)
    assert "'B-XYZ'" in message and "'labels'" in message and "\n" not in message


def test_unknown_token_in_an_unused_padded_namespace_is_oov() -> None:
    assert Vocabulary().index("token_characters", "q") == 1
    with pytest.raises(DataError):
        Vocabulary().index("labels", "O")


def test_from_counts_orders_by_frequency_then_string() -> None:
    counts = {
        "tokens": Counter({"b": 3, "a": 3, "c": 5, "d": 1}),
        "labels": Counter({"O": 10, "U-PER": 2, "B-LOC": 2}),
    }
    vocab = Vocabulary.from_counts(counts)
    assert vocab.tokens("tokens") == [PADDING, OOV, "c", "a", "b", "d"]
    assert vocab.tokens("labels") == ["O", "B-LOC", "U-PER"]
    assert vocab.namespaces() == ["labels", "tokens"]


def test_min_count_applies_per_namespace() -> None:
    counts = {
        "tokens": Counter({"often": 4, "twice": 2, "once": 1}),
        "token_characters": Counter({"x": 1}),
        "labels": Counter({"O": 5, "U-MISC": 1}),
    }
    vocab = Vocabulary.from_counts(counts, min_count={"tokens": 2})
    assert vocab.tokens("tokens") == [PADDING, OOV, "often", "twice"]
    assert vocab.index("tokens", "once") == 1
    assert vocab.tokens("token_characters") == [PADDING, OOV, "x"]
    assert vocab.tokens("labels") == ["O", "U-MISC"]


def test_max_size_keeps_the_most_frequent_beyond_the_reserved_entries() -> None:
    counts = {"tokens": Counter({w: 10 - i for i, w in enumerate("abcdefg")})}
    vocab = Vocabulary.from_counts(counts, max_size={"tokens": 3})
    assert vocab.tokens("tokens") == [PADDING, OOV, "a", "b", "c"]
    both = Vocabulary.from_counts(counts, min_count={"tokens": 9}, max_size={"tokens": 3})
    assert both.tokens("tokens") == [PADDING, OOV, "a", "b"]


def test_empty_namespace_is_kept() -> None:
    vocab = Vocabulary.from_counts({"labels": Counter(), "tokens": Counter()})
    assert vocab.namespaces() == ["labels", "tokens"]
    assert vocab.size("labels") == 0
    assert vocab.size("tokens") == 2


def test_save_load_round_trip(tmp_path: Path) -> None:
    counts = {
        "tokens": Counter({"naïve": 3, "Zürich": 2, "日本": 2, "x-y": 1, "@": 1, '"': 1}),
        "token_characters": Counter("naïveZürich日本"),
        "labels": Counter({"O": 4, "B-PER": 1, "L-PER": 1}),
        "empty_tags": Counter(),
    }
    vocab = Vocabulary.from_counts(counts)
    vocab.save(tmp_path / "vocabulary")
    assert (tmp_path / "vocabulary" / "namespaces.json").is_file()
    loaded = Vocabulary.load(tmp_path / "vocabulary")
    assert loaded.namespaces() == vocab.namespaces()
    for namespace in vocab.namespaces():
        assert loaded.tokens(namespace) == vocab.tokens(namespace)
        for i, token in enumerate(vocab.tokens(namespace)):
            assert loaded.index(namespace, token) == i
    assert loaded.index("tokens", "unseen") == 1
    with pytest.raises(DataError):
        loaded.index("labels", "U-ORG")
    # adding after loading continues the numbering
    assert loaded.add("tokens", "fresh") == vocab.size("tokens")


def test_load_rejects_a_directory_without_namespaces(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a saved vocabulary"):
        Vocabulary.load(tmp_path)


def test_labels_from_evaluation_data_adds_their_labels_but_not_their_tokens() -> None:
    from types import SimpleNamespace

    from elmo_experiments.data.fields import SequenceLabelField, TextField
    from elmo_experiments.data.token_indexers import SingleIdIndexer
    from elmo_experiments.run import build_vocabulary

    reader = SimpleNamespace(fields={"tokens": TextField({"tokens": SingleIdIndexer()}),
                                     "tags": SequenceLabelField("tokens")})
    train = [{"tokens": ["the", "cat"], "tags": ["B-A0", "I-A0"]}]
    dev = [{"tokens": ["a", "dog"], "tags": ["B-AA", "O"]}]
    settings = {"min_count": {}, "max_vocab_size": {}}
    only_train = build_vocabulary(reader, train, settings, ((reader, dev),))
    assert sorted(only_train.tokens("labels")) == ["B-A0", "I-A0"]
    with pytest.raises(DataError, match="'B-AA' is not in vocabulary namespace 'labels'"):
        only_train.index("labels", "B-AA")
    both = build_vocabulary(reader, train, {**settings, "labels_from_evaluation_data": True},
                            ((reader, dev),))
    assert sorted(both.tokens("labels")) == ["B-A0", "B-AA", "I-A0", "O"]
    assert both.tokens("labels")[:2] == only_train.tokens("labels")  # training's come first
    assert both.tokens("tokens") == only_train.tokens("tokens")  # dev's words stay unknown


def test_labels_from_evaluation_data_keeps_a_vocabulary_the_training_data_covers() -> None:
    """Evaluation labels that training already holds add no counts: the ids stay training's,
    even where the evaluation data would rank them otherwise."""
    from types import SimpleNamespace

    from elmo_experiments.data.fields import SequenceLabelField, TextField
    from elmo_experiments.data.token_indexers import SingleIdIndexer
    from elmo_experiments.run import build_vocabulary

    reader = SimpleNamespace(fields={"tokens": TextField({"tokens": SingleIdIndexer()}),
                                     "tags": SequenceLabelField("tokens")})
    train = [{"tokens": ["a", "b", "c"], "tags": ["O", "O", "B-X"]}]
    dev = [{"tokens": ["a", "b", "c", "d"], "tags": ["B-X", "B-X", "B-X", "I-Y"]},
           {"tokens": ["e"], "tags": ["B-Z"]}]
    settings = {"min_count": {}, "max_vocab_size": {}}
    plain = build_vocabulary(reader, train, settings, ((reader, dev),))
    both = build_vocabulary(reader, train, {**settings, "labels_from_evaluation_data": True},
                            ((reader, dev),))
    assert plain.tokens("labels") == ["O", "B-X"]
    assert both.tokens("labels") == ["O", "B-X", "B-Z", "I-Y"]  # unseen ones after, ties by name


def test_a_full_disk_while_saving_names_the_vocabulary_file_not_its_staging_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    vocabulary = Vocabulary.from_counts({"tokens": Counter({"the": 2})})
    with pytest.raises(WriteError) as error:
        vocabulary.save(tmp_path / "vocabulary")
    message = str(error.value)
    assert message.startswith(f"{tmp_path / 'vocabulary' / 'tokens.txt'}: "), message
    assert "the disk is full" in message and ".vocabulary." not in message
    assert list(tmp_path.iterdir()) == []  # no staging folder, no half-written vocabulary
