"""conlleval-exact span F1: hand-computed counts on synthetic tag sequences."""

from __future__ import annotations

import gzip
import random
from collections import Counter

import pytest

from elmo_experiments.data.tag_schemes import convert_tags, iob1_to_bio, iob1_to_bioul
from elmo_experiments.errors import DataError
from elmo_experiments.metrics.span_f1 import (
    ChunkCounts,
    SpanF1,
    extract_chunks,
    format_report,
    read_conlleval_file,
    split_tag,
)


def _counts(gold: list[list[str]], predicted: list[list[str]]) -> ChunkCounts:
    metric = SpanF1()
    metric.update(gold, predicted)
    return metric.counts()


def _totals(counts: ChunkCounts) -> tuple[int, int, int, int, int]:
    return (
        counts.tokens,
        counts.correct_tags,
        counts.gold_phrases,
        counts.found_phrases,
        counts.correct_phrases,
    )


def test_iob1_i_tag_after_o_or_other_type_starts_a_chunk() -> None:
    gold = [["I-PER", "I-PER", "O", "I-LOC", "I-ORG"]]
    pred = [["I-PER", "I-PER", "O", "I-ORG", "I-ORG"]]
    # gold: PER[0-1] LOC[3] ORG[4]; pred: PER[0-1] ORG[3-4]; only PER matches.
    counts = _counts(gold, pred)
    assert _totals(counts) == (5, 4, 3, 2, 1)
    assert counts.gold_by_type == {"PER": 1, "LOC": 1, "ORG": 1}
    assert counts.found_by_type == {"PER": 1, "ORG": 1}
    assert counts.correct_by_type == {"PER": 1}
    metrics = SpanF1()
    metrics.update(gold, pred)
    result = metrics.compute()
    assert result["precision"] == 50.0
    assert result["recall"] == pytest.approx(100 / 3)
    assert result["f1"] == pytest.approx(2 * 50 * (100 / 3) / (50 + 100 / 3))
    assert result["accuracy"] == 80.0
    assert result["precision-ORG"] == 0.0 and result["recall-LOC"] == 0.0
    assert result["f1-PER"] == 100.0


def test_b_between_adjacent_same_type_entities() -> None:
    gold = [["I-PER", "I-PER", "B-PER", "O"]]  # PER[0-1] PER[2]
    assert _totals(_counts(gold, [["I-PER", "I-PER", "I-PER", "O"]])) == (4, 3, 2, 1, 0)
    assert _totals(_counts(gold, gold)) == (4, 4, 2, 2, 2)


def test_type_change_inside_a_chunk_ends_it() -> None:
    gold = [["B-PER", "I-PER", "I-PER"]]  # PER[0-2]
    pred = [["B-PER", "I-PER", "I-LOC"]]  # PER[0-1] LOC[2]
    counts = _counts(gold, pred)
    assert _totals(counts) == (3, 2, 1, 2, 0)
    assert counts.found_by_type == {"PER": 1, "LOC": 1}


def test_right_span_wrong_type_is_not_correct() -> None:
    counts = _counts([["B-PER", "I-PER", "O"]], [["B-ORG", "I-ORG", "O"]])
    assert _totals(counts) == (3, 1, 1, 1, 0)
    assert counts.gold_by_type == {"PER": 1} and counts.found_by_type == {"ORG": 1}


def test_sentence_boundary_ends_chunks() -> None:
    gold = [["O", "B-PER", "I-PER"], ["I-PER", "O"]]  # PER[0:1-2] and PER[1:0]
    assert _totals(_counts(gold, gold)) == (5, 5, 2, 2, 2)
    pred = [["O", "B-PER", "I-PER"], ["O", "O"]]
    assert _totals(_counts(gold, pred)) == (5, 4, 2, 1, 1)
    # The same tokens as one sentence form a single chunk.
    flat = [["O", "B-PER", "I-PER", "I-PER", "O"]]
    assert _totals(_counts(flat, flat)) == (5, 5, 1, 1, 1)


def test_chunk_open_at_end_of_input_is_counted() -> None:
    metric = SpanF1()
    metric.update([["O", "B-LOC"]], [["O", "B-LOC"]])
    assert metric.compute()["f1"] == 100.0
    assert metric.counts().correct_phrases == 1


def test_bioul_and_bioes_input() -> None:
    gold = [["U-PER", "B-LOC", "I-LOC", "L-LOC", "U-LOC", "O"]]  # PER[0] LOC[1-3] LOC[4]
    pred = [["U-PER", "B-LOC", "L-LOC", "U-LOC", "U-LOC", "O"]]  # PER[0] LOC[1-2] LOC[3] LOC[4]
    counts = _counts(gold, pred)
    assert _totals(counts) == (6, 4, 3, 4, 2)
    assert counts.correct_by_type == {"PER": 1, "LOC": 1}
    aliased = [[t.replace("U-", "S-").replace("L-", "E-") for t in s] for s in (gold[0], pred[0])]
    assert _totals(_counts([aliased[0]], [aliased[1]])) == (6, 4, 3, 4, 2)


def test_iobes_extension_keeps_adjacent_chunks_apart() -> None:
    # conlleval.pl 2004 would merge these (no S; E-X B-X continues); the IOBES reading splits.
    assert extract_chunks(["B-X", "E-X", "B-X", "E-X"]) == [("X", 0, 1), ("X", 2, 3)]
    assert extract_chunks(["S-X", "S-X", "U-X"]) == [("X", 0, 0), ("X", 1, 1), ("X", 2, 2)]


def test_bracket_and_untyped_tags() -> None:
    assert extract_chunks(["[-NP", "[-NP", "O"]) == [("NP", 0, 0), ("NP", 1, 1)]
    assert extract_chunks(["B", "I", "O", "I"]) == [("", 0, 1), ("", 3, 3)]
    assert split_tag("B-0") == ("B", "")  # perl treats the type "0" as false
    assert split_tag("I-A-B") == ("I", "A-B")  # split at the first hyphen only


def test_empty_predictions_give_zero_precision() -> None:
    metric = SpanF1()
    metric.update([["B-PER", "O", "B-LOC"]], [["O", "O", "O"]])
    result = metric.compute()
    assert (result["precision"], result["recall"], result["f1"]) == (0.0, 0.0, 0.0)
    assert result["accuracy"] == pytest.approx(100 / 3)
    assert result["precision-PER"] == 0.0


def test_nothing_seen_gives_zeros() -> None:
    result = SpanF1().compute()
    assert result == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": 0.0}
    assert format_report(ChunkCounts()) == (
        "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
    )


def test_length_mismatch_names_sentence_and_lengths() -> None:
    with pytest.raises(ValueError, match=r"sentence 1: 2 gold tags but 3 predicted"):
        SpanF1().update([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])
    with pytest.raises(ValueError, match="2 gold sentences but 1 predicted"):
        SpanF1().update([["O"], ["O"]], [["O"]])


def test_streaming_and_reset() -> None:
    gold = [["B-PER", "I-PER"], ["O", "B-LOC"], ["B-ORG"]]
    pred = [["B-PER", "I-PER"], ["O", "B-ORG"], ["B-ORG"]]
    whole = SpanF1()
    whole.update(gold, pred)
    pieces = SpanF1()
    for g, p in zip(gold, pred, strict=True):
        pieces.update([g], [p])
        pieces.compute()  # reading mid-stream must not change the outcome
    assert pieces.compute() == whole.compute()
    assert pieces.compute()["precision"] == pytest.approx(200 / 3)
    pieces.reset()
    assert pieces.compute()["precision"] == 0.0
    assert pieces.counts().tokens == 0


def test_replicas_merge_to_the_whole() -> None:
    """Counts from separate streams (e.g. two processes' shards) add up to one stream's."""
    gold = [["B-PER", "I-PER"], ["O", "B-LOC"], ["B-ORG"], ["B-PER", "L-PER"]]
    pred = [["B-PER", "I-PER"], ["O", "B-ORG"], ["B-ORG"], ["B-PER", "L-PER"]]
    whole, first, second = SpanF1(), SpanF1(), SpanF1()
    whole.update(gold, pred)
    first.update(gold[:1], pred[:1])
    second.update(gold[1:], pred[1:])
    first.merge(second.state())
    assert first.compute() == whole.compute()
    assert first.counts() == whole.counts()


def test_format_report_exact_text() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "B-MISC"]]
    # 6 tokens, 4 tags right; gold PER LOC ORG; found PER ORG ORG MISC; correct PER, ORG.
    # precision 2/4 = 50.00, recall 2/3 = 66.67, FB1 = 2*50*66.67/116.67 = 57.14.
    expected = (
        "processed 6 tokens with 3 phrases; found: 4 phrases; correct: 2.\n"
        "accuracy:  66.67%; precision:  50.00%; recall:  66.67%; FB1:  57.14\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0\n"
        "             MISC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "              ORG: precision:  50.00%; recall: 100.00%; FB1:  66.67  2\n"
        "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
    )
    assert format_report(_counts(gold, pred)) == expected


def test_format_report_prints_empty_type_twice_like_perl() -> None:
    # perl's dedup `not($lastType) or ...` never drops a repeated empty type name.
    report = format_report(_counts([["B", "I", "O"]], [["B", "O", "O"]]))
    line = "                 : precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
    assert report == (
        "processed 3 tokens with 1 phrases; found: 1 phrases; correct: 0.\n"
        "accuracy:  66.67%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n" + line + line
    )


_FILE_TEXT = (
    "-DOCSTART- -X- O O\n"
    "\n"
    "Ann NNP B-PER B-PER\n"
    "Lee NNP I-PER I-PER\n"
    "ran VBD O O\n"
    "\n"
    "-X- -X- I-LOC I-LOC\n"
    "Oslo NNP I-LOC I-ORG\n"
)


def test_read_conlleval_file(tmp_path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(_FILE_TEXT)
    gold, pred = read_conlleval_file(path)
    assert gold == [["B-PER", "I-PER", "O"], ["I-LOC"]]
    assert pred == [["B-PER", "I-PER", "O"], ["I-ORG"]]
    report = format_report(_counts(gold, pred))
    assert report.splitlines()[0] == (
        "processed 4 tokens with 2 phrases; found: 2 phrases; correct: 1."
    )
    gold, pred = read_conlleval_file(path, keep_docstart=True)  # conlleval.pl counts it
    assert gold[0] == ["O"] and len(gold) == 3


def test_read_conlleval_gz(tmp_path) -> None:
    plain = tmp_path / "out.txt"
    plain.write_text(_FILE_TEXT)
    packed = tmp_path / "out.txt.gz"
    with gzip.open(packed, "wt") as handle:
        handle.write(_FILE_TEXT)
    assert read_conlleval_file(packed) == read_conlleval_file(plain)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a B-PER B-PER\nb I-PER\n", 2),  # fewer fields than the first line
        ("a x O O\n\nb x y O O\n", 3),  # more fields than the first line
        ("O\nO\n", 1),  # fewer than 2 fields
    ],
)
def test_malformed_file_names_line(tmp_path, text: str, line: int) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=rf"bad\.txt:{line}: ") as info:
        read_conlleval_file(path)
    assert "\n" not in str(info.value)


# ---- property-style checks against an independent brute-force chunker ----

_TYPES = ("PER", "LOC")


def _parts(tags: list[str]) -> list[tuple[str, str]]:
    aliases = {"L": "E", "U": "S"}
    return [("O", "") if t == "O" else (aliases.get(t[0], t[0]), t[2:]) for t in tags]


def _brute_chunks(tags: list[str]) -> set[tuple[str, int, int]]:
    """Lenient IOBES reading written independently: mark begins, then group."""
    parts = _parts(tags)
    begins = []
    for i, (prefix, kind) in enumerate(parts):
        before = parts[i - 1] if i else ("O", "")
        continues = prefix in "IE" and before[0] in "BI" and before[1] == kind
        begins.append(prefix != "O" and not continues)
    chunks = set()
    for i, begin in enumerate(begins):
        if begin:
            j = i
            while (
                j + 1 < len(tags)
                and parts[j][0] in "BI"
                and parts[j + 1][0] != "O"
                and not begins[j + 1]
            ):
                j += 1
            chunks.add((parts[i][1], i, j))
    return chunks


def _random_tags(rng: random.Random, prefixes: str) -> list[str]:
    vocab = ["O"] + [f"{p}-{t}" for p in prefixes for t in _TYPES]
    return [rng.choice(vocab) for _ in range(rng.randint(0, 10))]


def test_conversions_keep_the_metric_chunk_set() -> None:
    rng = random.Random(7)
    for _ in range(500):
        iob1 = _random_tags(rng, "IB")
        chunks = extract_chunks(iob1)
        assert set(chunks) == _brute_chunks(iob1)
        assert extract_chunks(iob1_to_bio(iob1)) == chunks
        assert extract_chunks(iob1_to_bioul(iob1)) == chunks
        assert extract_chunks(convert_tags(iob1, "IOB1", "IOB1")) == chunks
        if iob1:
            counts = _counts([iob1], [iob1_to_bioul(iob1)])
            assert counts.correct_phrases == counts.gold_phrases == len(chunks)


@pytest.mark.parametrize("prefixes", ["IB", "BIES", "BILU"])
def test_metric_agrees_with_brute_force(prefixes: str) -> None:
    rng = random.Random(prefixes)
    for _ in range(300):
        gold = [_random_tags(rng, prefixes) for _ in range(rng.randint(0, 4))]
        pred = [[rng.choice([t, *_random_tags(rng, prefixes)[:1]]) for t in s] for s in gold]
        gold_set, pred_set, tokens, right = set(), set(), 0, 0
        for n, (g, p) in enumerate(zip(gold, pred, strict=True)):
            gold_set |= {(n, *c) for c in _brute_chunks(g)}
            pred_set |= {(n, *c) for c in _brute_chunks(p)}
            tokens += len(g)
            right += sum(a == b for a, b in zip(_parts(g), _parts(p), strict=True))
        counts = _counts(gold, pred)
        assert _totals(counts) == (
            tokens,
            right,
            len(gold_set),
            len(pred_set),
            len(gold_set & pred_set),
        )
        assert counts.gold_by_type == dict(Counter(c[1] for c in gold_set))
        assert counts.found_by_type == dict(Counter(c[1] for c in pred_set))
        assert counts.correct_by_type == dict(Counter(c[1] for c in gold_set & pred_set))


def test_strict_reading_of_bioul_prefixes_is_conlleval_s() -> None:
    """conlleval.pl has no rule for L- and U-: without --iobes only a change of type ends or
    starts a chunk there, so B-PER L-PER I-PER is one phrase (hand-traced through its
    endOfChunk/startOfChunk); the IOBES reading makes it two."""
    from elmo_experiments.metrics.span_f1 import SpanF1

    tags = ["B-PER", "L-PER", "I-PER", "U-LOC", "U-LOC", "O"]
    strict, iobes = SpanF1(iobes=False), SpanF1(iobes=True)
    for metric in (strict, iobes):
        metric.update([tags], [tags])
    # strict: [B-PER L-PER I-PER] [U-LOC U-LOC] (no rule splits two U-LOC of one type)
    assert strict.counts().gold_phrases == 2
    assert strict.counts().gold_by_type == {"PER": 1, "LOC": 1}
    # IOBES: [B-PER L-PER] [I-PER] [U-LOC] [U-LOC]
    assert iobes.counts().gold_phrases == 4
