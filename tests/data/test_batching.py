"""Batching: every index exactly once, size limits, determinism per seed, collate shapes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from elmo_experiments.data.batching import (
    InstanceLoader,
    batch_groups,
    collate,
    index_instances,
    iterate_batches,
    make_batches,
)
from elmo_experiments.data.fields import (
    LabelField,
    ListTextField,
    MetadataField,
    SequenceLabelField,
    SpanField,
    TensorField,
    TextField,
)
from elmo_experiments.data.token_indexers import CharactersIndexer, SingleIdIndexer
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError

RNG = np.random.default_rng(1234)
LENGTHS = RNG.integers(1, 40, size=157).tolist()


def flat(batches: list[list[int]]) -> list[int]:
    return [i for batch in batches for i in batch]


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("sort_by_length", [True, False])
@pytest.mark.parametrize("max_tokens", [None, 120])
def test_every_index_exactly_once_and_limits_respected(
    shuffle: bool, sort_by_length: bool, max_tokens: int | None
) -> None:
    batches = make_batches(LENGTHS, 16, max_tokens, shuffle=shuffle,
                           sort_by_length=sort_by_length, seed=7)
    assert sorted(flat(batches)) == list(range(len(LENGTHS)))
    for batch in batches:
        assert 1 <= len(batch) <= 16
        if max_tokens is not None and len(batch) > 1:
            assert max(LENGTHS[i] for i in batch) * len(batch) <= max_tokens


def test_a_sentence_longer_than_max_tokens_gets_its_own_batch() -> None:
    lengths = [3, 50, 3, 3]
    batches = make_batches(lengths, 10, max_tokens=20, shuffle=False, sort_by_length=False)
    assert sorted(flat(batches)) == [0, 1, 2, 3]
    assert [1] in batches


def test_unshuffled_unsorted_batches_keep_order() -> None:
    batches = make_batches([5, 1, 9, 2, 2], 2, shuffle=False, sort_by_length=False)
    assert batches == [[0, 1], [2, 3], [4]]


def test_unshuffled_sorted_batches_group_by_length() -> None:
    lengths = [5, 1, 9, 2, 2, 7]
    batches = make_batches(lengths, 2, shuffle=False, sort_by_length=True)
    assert batches == [[1, 3], [4, 0], [5, 2]]


def test_sorting_makes_batches_homogeneous() -> None:
    batches = make_batches(LENGTHS, 16, shuffle=True, sort_by_length=True, padding_noise=0.0,
                           seed=3)
    padded = sum(max(LENGTHS[i] for i in b) * len(b) for b in batches)
    unsorted = make_batches(LENGTHS, 16, shuffle=True, sort_by_length=False, seed=3)
    padded_unsorted = sum(max(LENGTHS[i] for i in b) * len(b) for b in unsorted)
    assert padded < padded_unsorted
    for batch in batches:
        spread = [LENGTHS[i] for i in batch]
        assert max(spread) - min(spread) <= 8


def test_deterministic_per_seed_and_different_across_seeds() -> None:
    first = make_batches(LENGTHS, 8, seed=11)
    assert make_batches(LENGTHS, 8, seed=11) == first
    others = [make_batches(LENGTHS, 8, seed=s) for s in (12, 13, 14)]
    assert all(other != first for other in others)
    unsorted = [make_batches(LENGTHS, 8, sort_by_length=False, seed=s) for s in (1, 2)]
    assert unsorted[0] != unsorted[1]


def test_unshuffled_batches_ignore_the_seed() -> None:
    assert make_batches(LENGTHS, 8, shuffle=False, seed=1) == make_batches(
        LENGTHS, 8, shuffle=False, seed=2)


def test_empty_input_gives_no_batches() -> None:
    assert make_batches([], 4) == []


# ----------------------------------------------------------------- collate / iterate

SENTENCES = [
    (["Yarrow", "met", "Oskel"], ["U-PER", "O", "U-PER"]),
    (["Hi"], ["O"]),
    (["The", "Brimley", "Cup", "ended", "."], ["O", "B-MISC", "L-MISC", "O", "O"]),
    (["Go", "now"], ["O", "O"]),
]


def make_data() -> tuple[list, dict, Vocabulary]:
    indexers = {"tokens": SingleIdIndexer(lowercase_tokens=True),
                "token_characters": CharactersIndexer(min_padding_length=3)}
    fields = {"tokens": TextField(indexers), "tags": SequenceLabelField("tokens")}
    counts: dict[str, Counter[str]] = {}
    instances = [{"tokens": t, "tags": g} for t, g in SENTENCES]
    for instance in instances:
        for name, field in fields.items():
            field.count(instance[name], counts)
    vocab = Vocabulary.from_counts(counts)
    return index_instances(instances, fields, vocab), fields, vocab


def test_index_instances() -> None:
    data, _, vocab = make_data()
    assert [item.length for item in data] == [3, 1, 5, 2]
    assert data[2].values["tags"].tolist() == [vocab.index("labels", t) for t in SENTENCES[2][1]]
    assert data[0].values["tokens"]["tokens"].shape == (3,)
    assert data[0].values["tokens"]["token_characters"].shape == (3, 6)
    assert data[1].values["tokens"]["token_characters"].shape == (1, 3)
    assert data[3].instance == {"tokens": ["Go", "now"], "tags": ["O", "O"]}


def test_collate_shapes_and_mask() -> None:
    data, fields, _ = make_data()
    batch = collate([data[0], data[1], data[2]], fields)
    tokens, mask = batch.inputs["tokens"], batch.masks["tokens"]
    assert tokens["tokens"].shape == (3, 5)
    assert tokens["token_characters"].shape == (3, 5, 7)
    assert mask.dtype == torch.bool
    assert mask.tolist() == [
        [True, True, True, False, False],
        [True, False, False, False, False],
        [True, True, True, True, True],
    ]
    assert torch.equal(tokens["tokens"] != 0, mask)
    assert torch.equal(tokens["token_characters"][:, :, 0] != 0, mask)
    tags = batch.inputs["tags"]
    assert tags.shape == (3, 5)
    assert tags[0, :3].tolist() == data[0].values["tags"].tolist()
    assert tags[~mask].eq(0).all()
    assert [m["tokens"] for m in batch.metadata] == [s[0] for s in SENTENCES[:3]]
    assert batch.num_tokens == 3 + 1 + 5
    arguments = batch.arguments()
    assert sorted(arguments) == ["mask", "metadata", "tags", "tokens"]
    assert arguments["mask"] is mask  # computed once, handed on as it is


def test_collate_without_labels_has_no_tags() -> None:
    data, fields, vocab = make_data()
    unlabelled = index_instances([{"tokens": ["Yarrow"]}], fields, vocab)
    assert unlabelled[0].values["tags"] is None
    batch = collate([data[0], unlabelled[0]], fields)
    assert "tags" not in batch.inputs
    assert batch.masks["tokens"].shape == (2, 3)


@pytest.mark.parametrize("train", [True, False])
def test_iterate_batches_adds_indices(train: bool) -> None:
    data, fields, _ = make_data()
    settings = {"batch_size": 2, "shuffle": True, "sort_by_length": True, "padding_noise": 0.1,
                "validation_batch_size": 3}
    batches = list(iterate_batches(data, fields, settings, seed=5, train=train))
    assert sorted(i for b in batches for i in b.indices) == [0, 1, 2, 3]
    for batch in batches:
        assert len(batch.indices) <= (2 if train else 3)
        lengths = batch.masks["tokens"].sum(dim=1).tolist()
        assert lengths == [data[i].length for i in batch.indices]
        assert [m["tokens"] for m in batch.metadata] == [
            SENTENCES[i][0] for i in batch.indices]
    assert len(batches) == len(batch_groups([d.length for d in data], settings, 5, train))


def test_evaluation_batches_are_unshuffled() -> None:
    data, fields, _ = make_data()
    settings = {"batch_size": 2, "shuffle": True}
    runs = [[b.indices for b in iterate_batches(data, fields, settings, seed=s, train=False)]
            for s in (1, 2, 3)]
    assert runs[0] == runs[1] == runs[2] == [[1, 3], [0, 2]]


def test_a_label_unseen_in_training_names_the_source_and_instance() -> None:
    _, fields, vocab = make_data()
    instances = [{"tokens": ["Hi"], "tags": ["O"]}, {"tokens": ["Hi"], "tags": ["U-XYZ"]}]
    with pytest.raises(DataError, match=r"dev.txt: instance 2: tags: label 'U-XYZ' is not in"):
        index_instances(instances, fields, vocab, source="dev.txt")


def test_a_per_token_field_of_the_wrong_length_is_an_error() -> None:
    _, fields, vocab = make_data()
    with pytest.raises(DataError, match=r"dev.txt: instance 1: tags: 1 values for the 2 tokens"):
        index_instances([{"tokens": ["Hi", "there"], "tags": ["O"]}], fields, vocab,
                        source="dev.txt")


def test_a_missing_input_field_is_an_error() -> None:
    _, fields, vocab = make_data()
    with pytest.raises(DataError, match=r"dev.txt: instance 1: no 'tokens'"):
        index_instances([{"tags": ["O"]}], fields, vocab, source="dev.txt")


def test_single_labels_and_several_text_fields() -> None:
    _, text, vocab = make_data()
    indexers = text["tokens"].indexers
    fields = {"premise": TextField(indexers), "hypothesis": TextField(indexers),
              "label": LabelField(), "pair_id": MetadataField()}
    instances = [{"premise": ["Go", "now"], "hypothesis": ["Hi"], "label": "O", "pair_id": "a"},
                 {"premise": ["Hi"], "hypothesis": ["The", "Brimley", "Cup"], "label": "U-PER"}]
    data = index_instances(instances, fields, vocab)
    assert [item.length for item in data] == [2, 3]
    batch = collate(data, fields)
    assert batch.inputs["premise"]["tokens"].shape == (2, 2)
    assert batch.inputs["hypothesis"]["tokens"].shape == (2, 3)
    arguments = batch.arguments()
    assert arguments["premise_mask"].tolist() == [[True, True], [True, False]]
    assert arguments["hypothesis_mask"].tolist() == [[True, False, False], [True, True, True]]
    assert arguments["label"].tolist() == [vocab.index("labels", "O"),
                                           vocab.index("labels", "U-PER")]
    assert batch.num_tokens == 2 + 1 + 1 + 3
    assert "mask" not in arguments and "tags" not in arguments and "pair_id" not in arguments
    assert [m.get("pair_id") for m in batch.metadata] == ["a", None]


def test_spans_are_token_indices_padded_with_minus_one() -> None:
    _, text, vocab = make_data()
    fields = {"tokens": text["tokens"], "answer": SpanField("tokens"),
              "mentions": SpanField("tokens", many=True)}
    instances = [{"tokens": ["Yarrow", "met", "Oskel"], "answer": (2, 2),
                  "mentions": [(0, 0), (2, 2), (0, 2)]},
                 {"tokens": ["Hi"], "answer": [0, 0], "mentions": [(0, 0)]}]
    batch = collate(index_instances(instances, fields, vocab), fields)
    assert batch.inputs["answer"].tolist() == [[2, 2], [0, 0]]  # (batch, 2)
    assert batch.inputs["mentions"].tolist() == [[[0, 0], [2, 2], [0, 2]],
                                                 [[0, 0], [-1, -1], [-1, -1]]]
    assert batch.arguments()["mentions_mask"].tolist() == [[True, True, True],
                                                           [True, False, False]]
    with pytest.raises(DataError, match=r"instance 1: answer: span \(1, 3\) is not inside"):
        index_instances([{"tokens": ["a", "b"], "answer": (1, 3), "mentions": []}], fields,
                        vocab)


def test_per_token_features_never_reach_the_vocabulary() -> None:
    _, text, vocab = make_data()
    fields = {"tokens": text["tokens"], "predicate": TensorField("tokens", dtype="long"),
              "vectors": TensorField("tokens", padding_value=-1.0)}
    instances = [{"tokens": ["Yarrow", "met"], "predicate": [0, 1],
                  "vectors": [[0.5, 1.0], [2.0, 3.0]]},
                 {"tokens": ["Hi"], "predicate": [1], "vectors": [[4.0, 5.0]]}]
    counts: dict[str, Counter[str]] = {}
    for name, field in fields.items():
        if name != "tokens":
            field.count(instances[0][name], counts)
    assert counts == {}
    batch = collate(index_instances(instances, fields, vocab), fields)
    assert batch.inputs["predicate"].dtype == torch.long
    assert batch.inputs["predicate"].tolist() == [[0, 1], [1, 0]]
    assert batch.inputs["vectors"].tolist() == [[[0.5, 1.0], [2.0, 3.0]],
                                                [[4.0, 5.0], [-1.0, -1.0]]]


def test_a_document_batches_as_sentences_of_tokens() -> None:
    _, text, vocab = make_data()
    fields = {"document": ListTextField(text["tokens"].indexers)}
    instances = [{"document": [["Yarrow", "met", "Oskel"], ["Hi"]]},
                 {"document": [["Go", "now"]]}]
    data = index_instances(instances, fields, vocab)
    assert [item.length for item in data] == [4, 2]  # tokens across the sentences
    batch = collate(data, fields)
    ids = batch.inputs["document"]["tokens"]
    assert ids.shape == (2, 2, 3)  # (batch, sentences, tokens)
    assert batch.inputs["document"]["token_characters"].shape == (2, 2, 3, 6)
    assert batch.masks["document"].tolist() == [[[True, True, True], [True, False, False]],
                                                [[True, True, False], [False, False, False]]]
    assert ids[0, 1, 0] == vocab.index("tokens", "hi")
    assert torch.equal(ids != 0, batch.masks["document"])
    assert batch.num_tokens == 6


@pytest.mark.parametrize(("kind", "value", "problem"), [
    ("answer", [], r"answer: expected a \[start, end\] pair of integer token indices"),
    ("answer", [0.5, 1.7], r"answer: expected a \[start, end\] pair"),
    ("answer", [[0, 0], [1, 1]], r"answer: expected a \[start, end\] pair"),
    ("mentions", [[0, 0], [1]], r"mentions: expected a list of \[start, end\] pairs"),
    ("vectors", [[1.0, 2.0], [3.0]], r"vectors: expected one number or one vector"),
])
def test_malformed_spans_and_features_name_the_instance(kind: str, value: object,
                                                        problem: str) -> None:
    _, text, vocab = make_data()
    fields = {"tokens": text["tokens"], "answer": SpanField("tokens"),
              "mentions": SpanField("tokens", many=True), "vectors": TensorField("tokens")}
    instance = {"tokens": ["a", "b"], "answer": [0, 1], "mentions": [[0, 0]],
                "vectors": [[1.0], [2.0]], kind: value}
    with pytest.raises(DataError, match=r"dev.jsonl: instance 1: " + problem):
        index_instances([instance], fields, vocab, source="dev.jsonl")


def test_a_field_following_no_text_field_is_an_error() -> None:
    _, text, vocab = make_data()
    fields = {"tokens": text["tokens"], "tags": SequenceLabelField("words")}
    with pytest.raises(DataError, match=r"field 'tags' follows 'words', which is not a text"):
        index_instances([{"tokens": ["a"], "tags": ["O"]}], fields, vocab)


def test_features_of_different_sizes_in_one_batch_are_an_error() -> None:
    _, text, vocab = make_data()
    fields = {"tokens": text["tokens"], "vectors": TensorField("tokens")}
    data = index_instances([{"tokens": ["a"], "vectors": [[1.0]]},
                            {"tokens": ["b"], "vectors": [[1.0, 2.0]]}], fields, vocab)
    with pytest.raises(DataError, match=r"per-token features of different shapes"):
        collate(data, fields)


def test_a_loader_counts_the_batches_each_epoch_yields_under_max_tokens() -> None:
    """Shuffled, noisy lengths bucket differently each epoch under ``max_tokens``: the count
    is that epoch's, not the unshuffled pass's (ranks that disagreed on it would hang)."""
    fields = {"tokens": TextField({"tokens": SingleIdIndexer()})}
    instances = [{"tokens": ["w"] * n} for n in LENGTHS]
    counts: dict[str, Counter[str]] = {}
    for instance in instances:
        fields["tokens"].count(instance["tokens"], counts)
    vocab = Vocabulary.from_counts(counts)
    data = index_instances(instances, fields, vocab)
    settings = {"batch_size": 16, "max_tokens": 120, "shuffle": True, "padding_noise": 0.3}
    loader = InstanceLoader(data, fields, settings, seed=3, train=True)
    counts = [loader.num_batches(epoch) for epoch in range(8)]
    for epoch, count in enumerate(counts):
        assert len(list(loader.batches(epoch))) == count
    assert len(loader) == counts[0]
    unshuffled = len(make_batches(LENGTHS, 16, 120, shuffle=False))
    assert any(count != unshuffled for count in counts)  # what len() used to report


def test_an_instance_over_max_instance_tokens_names_the_source_instance_and_field() -> None:
    _, fields, vocab = make_data()
    instances = [{"tokens": ["Hi"], "tags": ["O"]}, {"tokens": ["Hi"] * 6, "tags": ["O"] * 6}]
    assert len(index_instances(instances, fields, vocab, max_instance_tokens=6)) == 2
    with pytest.raises(DataError) as info:
        index_instances(instances, fields, vocab, source="dev.txt", max_instance_tokens=5)
    assert str(info.value) == ("dev.txt: instance 2: tokens: 6 tokens, over "
                               "data_loader.max_instance_tokens (5); raise it to read such "
                               "instances, or have the reader cut them")


def test_a_document_counts_all_its_sentences_and_the_default_limit_is_10000() -> None:
    indexers = {"tokens": SingleIdIndexer()}
    fields = {"document": ListTextField(indexers)}
    vocab = Vocabulary.from_counts({"tokens": Counter(["a"])})
    document = {"document": [["a"] * 6_000, ["a"] * 4_000]}
    assert index_instances([document], fields, vocab)[0].length == 10_000
    document["document"].append(["a"])
    with pytest.raises(DataError, match=r"^data: instance 1: document: 10,001 tokens, over "
                                        r"data_loader\.max_instance_tokens \(10,000\)"):
        index_instances([document], fields, vocab)


def test_pairs_are_bucketed_by_their_shorter_text_too():
    rng = np.random.default_rng(0)
    longer = rng.integers(10, 16, 2000).tolist()
    shorter = rng.integers(1, 10, 2000).tolist()

    def padding(batches: list[list[int]], lengths: list[int]) -> int:
        return sum(len(b) * max(lengths[i] for i in b) - sum(lengths[i] for i in b)
                   for b in batches)

    plain = make_batches(longer, 32, seed=4)
    paired = make_batches(longer, 32, seed=4, then_by=shorter)
    assert sorted(i for b in paired for i in b) == list(range(2000))
    assert padding(paired, shorter) < padding(plain, shorter) / 3
    assert padding(paired, longer) <= padding(plain, longer) * 1.5 + 2000 * 0.05
    assert make_batches(longer, 32, seed=4, then_by=[0] * 2000) == plain  # one text: as before
