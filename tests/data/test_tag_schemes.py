"""Tag scheme conversion and CRF transition constraints (hand-made synthetic cases)."""

from __future__ import annotations

import itertools
import random

import pytest

from elmo_experiments.data.tag_schemes import (
    allowed_transitions,
    bio_to_bioul,
    bioul_to_bio,
    convert_tags,
    iob1_to_bio,
    iob1_to_bioul,
    tags_to_spans,
)


def test_iob1_to_bio_starts_chunks_like_conlleval() -> None:
    tags = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG"]
    assert iob1_to_bio(tags) == ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG"]


def test_bio_to_bioul() -> None:
    tags = ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "I-LOC", "I-LOC", "B-ORG"]
    expected = ["B-PER", "L-PER", "U-PER", "O", "B-LOC", "I-LOC", "L-LOC", "U-ORG"]
    assert bio_to_bioul(tags) == expected


def test_bio_with_i_after_o_is_read_as_a_chunk_start() -> None:
    assert bio_to_bioul(["O", "I-PER", "I-PER", "I-LOC"]) == ["O", "B-PER", "L-PER", "U-LOC"]


def test_iob1_to_bioul_and_back() -> None:
    iob1 = ["I-PER", "B-PER", "I-PER", "O", "I-MISC"]
    bioul = iob1_to_bioul(iob1)
    assert bioul == ["U-PER", "B-PER", "L-PER", "O", "U-MISC"]
    assert bioul_to_bio(bioul) == ["B-PER", "B-PER", "I-PER", "O", "B-MISC"]
    assert convert_tags(bioul, "BIOUL", "IOB1") == iob1


def test_bioul_accepts_bioes_aliases() -> None:
    expected = ["B-PER", "B-LOC", "I-LOC", "B-LOC"]
    assert bioul_to_bio(["S-PER", "B-LOC", "E-LOC", "S-LOC"]) == expected


def test_bio_to_iob1_uses_b_only_between_adjacent_same_type_chunks() -> None:
    bio = ["B-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG"]
    assert convert_tags(bio, "BIO", "IOB1") == ["I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG"]


def test_identity_and_empty() -> None:
    tags = ["O", "I-PER", "B-PER"]
    for scheme in ("IOB1", "BIO"):
        assert convert_tags(tags, scheme, scheme) == tags
    assert convert_tags([], "IOB1", "BIOUL") == []


@pytest.mark.parametrize(
    ("tags", "source", "bad", "position"),
    [
        (["O", "PER"], "IOB1", "'PER'", 1),
        (["B-PER", "L-PER"], "BIO", "'L-PER'", 1),
        (["B-", "O"], "BIO", "'B-'", 0),
        (["O", "O", "o"], "BIOUL", "'o'", 2),
    ],
)
def test_malformed_tags_raise_value_error(tags, source, bad, position) -> None:
    with pytest.raises(ValueError, match=f"{bad} at position {position}") as info:
        convert_tags(tags, source, "BIOUL")
    assert "\n" not in str(info.value)


def test_unknown_scheme() -> None:
    with pytest.raises(ValueError, match="unknown tag scheme 'IOB2'"):
        convert_tags(["O"], "IOB2", "BIO")
    with pytest.raises(ValueError, match="unknown tag scheme"):
        allowed_transitions("BILOU", {0: "O"})


def test_allowed_transitions_bio() -> None:
    labels = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC"}  # START=5, END=6
    allowed = set(allowed_transitions("BIO", labels))
    into_i_per = {i for i, j in allowed if j == 2}
    into_i_loc = {i for i, j in allowed if j == 4}
    assert into_i_per == {1, 2}
    assert into_i_loc == {3, 4}
    everything_else = {(i, j) for i in range(6) for j in (0, 1, 3, 6)}
    assert allowed == everything_else | {(1, 2), (2, 2), (3, 4), (4, 4)}


def test_allowed_transitions_bioul() -> None:
    labels = {0: "O", 1: "B-PER", 2: "I-PER", 3: "L-PER", 4: "U-PER"}  # START=5, END=6
    allowed = set(allowed_transitions("BIOUL", labels))
    free = {(i, j) for i in (0, 3, 4, 5) for j in (0, 1, 4, 6)}
    inside = {(i, j) for i in (1, 2) for j in (2, 3)}
    assert allowed == free | inside


def test_allowed_transitions_bioul_types_must_match() -> None:
    labels = {0: "B-PER", 1: "L-PER", 2: "L-LOC", 3: "O"}
    allowed = set(allowed_transitions("BIOUL", labels))
    assert (0, 1) in allowed
    assert (0, 2) not in allowed
    assert (0, 5) not in allowed  # B -> END
    assert (4, 5) in allowed  # START -> END


def test_allowed_transitions_iob1() -> None:
    labels = {0: "O", 1: "I-PER", 2: "B-PER", 3: "I-LOC", 4: "B-LOC"}  # START=5, END=6
    allowed = set(allowed_transitions("IOB1", labels))
    assert {i for i, j in allowed if j == 2} == {1, 2}
    assert {i for i, j in allowed if j == 4} == {3, 4}
    for i in range(6):
        for j in (0, 1, 3, 6):
            assert (i, j) in allowed
    assert len(allowed) == 6 * 4 + 4


def test_allowed_transitions_rejects_bad_labels() -> None:
    with pytest.raises(ValueError, match="label id 1"):
        allowed_transitions("BIO", {0: "O", 1: "PER"})
    with pytest.raises(ValueError, match="label ids must be"):
        allowed_transitions("BIO", {0: "O", 2: "B-PER"})


def _random_iob1(rng: random.Random) -> list[str]:
    vocab = ["O", "I-PER", "B-PER", "I-LOC", "B-LOC"]
    return [rng.choice(vocab) for _ in range(rng.randint(0, 12))]


def _obeys(scheme: str, tags: list[str]) -> bool:
    labels = dict(enumerate(sorted({*tags, "O"})))
    index = {tag: i for i, tag in labels.items()}
    allowed = set(allowed_transitions(scheme, labels))
    path = [len(labels), *(index[t] for t in tags), len(labels) + 1]
    return all((a, b) in allowed for a, b in itertools.pairwise(path))


def test_random_conversions_preserve_spans_and_obey_constraints() -> None:
    rng = random.Random(1234)
    for _ in range(500):
        iob1 = _random_iob1(rng)
        spans = tags_to_spans(iob1, "IOB1")
        bio = iob1_to_bio(iob1)
        bioul = iob1_to_bioul(iob1)
        canonical_iob1 = convert_tags(bio, "BIO", "IOB1")
        assert tags_to_spans(bio, "BIO") == spans
        assert tags_to_spans(bioul, "BIOUL") == spans
        assert tags_to_spans(canonical_iob1, "IOB1") == spans
        assert bioul_to_bio(bioul) == bio
        assert bio_to_bioul(bio) == bioul
        assert convert_tags(bioul, "BIOUL", "IOB1") == canonical_iob1
        assert _obeys("BIO", bio)
        assert _obeys("BIOUL", bioul)
        assert _obeys("IOB1", canonical_iob1)
