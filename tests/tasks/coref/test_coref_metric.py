"""The CoNLL-2012 coreference scorer's metrics (scorer.pl v8.01's rules): MUC, B-cubed, CEAF-e,
their micro-averages and the CoNLL F1; reading and writing the files, ``elmo-exp score coref``
and the ``conll_coref`` dataset metric. Words and documents are invented.

With ``$COREF_SCORER_PL`` naming the official scorer.pl (and perl on the PATH), random files
and the hand-made cases are also scored by it, and its totals must match ours: byte for byte
for one-document files (its documents are added in Perl's hash order, so on several documents
a last bit may differ, and the numbers are compared to 1e-9 instead).
"""

from __future__ import annotations

import gzip
import itertools
import os
import random
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from in_process import elmo_exp

from elmo_experiments.config.registry import lookup
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.coref.metric import (
    ConllCoref,
    align,
    b_cubed,
    ceaf_e,
    format_column,
    format_document,
    format_report,
    mention_identification,
    muc,
    phi4,
    read_conll,
    remove_repeated,
    score_documents,
    score_files,
)

ROOT = Path(__file__).resolve().parents[3]
SCORER_PL = os.environ.get("COREF_SCORER_PL")
OFFICIAL = bool(SCORER_PL and Path(SCORER_PL).is_file() and shutil.which("perl"))

# the letters of the papers' examples as one-token mentions
a, b, c, d, e, f, g, h, i = ((n, n) for n in range(9))


def close(counts: tuple[float, ...], expected: tuple[float, ...]) -> bool:
    return all(x == pytest.approx(y, abs=1e-12) for x, y in zip(counts, expected, strict=True))


# --- hand-computed documents -------------------------------------------------------------------

KEY = [[a, b, c], [d, e, f, g]]
RESPONSE = [[a, b], [c, d], [f, g, h, i]]  # e missed; h and i twinless


def test_the_classic_example_by_hand() -> None:
    # MUC recall: {a,b,c} is cut into {a,b} {c}: 3 - 2 = 1; {d,e,f,g} into {d} {e} {f,g} (e, which
    # the response lacks, a part of its own): 4 - 3 = 1; over (3 - 1) + (4 - 1) links: 2 / 5.
    # Precision: {a,b} 2 - 1 = 1; {c,d} 2 - 2 = 0; {f,g,h,i} -> {f,g} {h} {i}: 4 - 3 = 1; over
    # 1 + 1 + 3: 2 / 5.
    assert muc(KEY, RESPONSE) == (2, 5, 2, 5)
    # B3 recall: sum |K∩R|^2/|K| = 2²/3 + 1²/3 + 1²/4 + 2²/4 = 5/3 + 5/4 = 35/12 over 7 key
    # mentions. Precision: sum |K∩R|^2/|R| = 2²/2 + 1²/2 + 1²/2 + 2²/4 = 4 over 8.
    assert close(b_cubed(KEY, RESPONSE), (35 / 12, 7, 4, 8))
    # CEAF-e: phi4 = 2·2/5 for ({a,b,c},{a,b}), 2·1/5 ({a,b,c},{c,d}), 2·1/6 ({d,e,f,g},{c,d}),
    # 2·2/8 ({d,e,f,g},{f,g,h,i}). Best one-to-one: 4/5 + 1/2 = 1.3 (against 2/5 + 1/2 = 0.9 and
    # 4/5 + 1/3 = 1.13); over 2 key and 3 response entities.
    assert close(ceaf_e(KEY, RESPONSE), (1.3, 2, 1.3, 3))
    # mentions: 7 key spans, 8 response spans, 6 in both (a b c d f g)
    assert mention_identification(KEY, RESPONSE) == (6, 7, 6, 8)
    result = score_documents([KEY], [RESPONSE])
    assert result["muc"]["recall"] == pytest.approx(40) and result["muc"]["f1"] == pytest.approx(40)
    assert result["b3"]["recall"] == pytest.approx(100 * 35 / 84)  # 41.667
    assert result["b3"]["precision"] == pytest.approx(50)
    assert result["b3"]["f1"] == pytest.approx(100 * 5 / 11)  # 2·(5/12)(1/2) / (11/12)
    assert result["ceafe"]["recall"] == pytest.approx(65)
    assert result["ceafe"]["precision"] == pytest.approx(130 / 3)  # 43.333
    assert result["ceafe"]["f1"] == pytest.approx(52)  # 2·0.65·0.4333 / 1.0833
    assert result["mentions"]["f1"] == pytest.approx(80)
    assert result["conll_f1"] == pytest.approx((40 + 500 / 11 + 52) / 3)  # 45.818
    assert result["documents"] == 1 and result["repeated_mentions"] == 0


def test_a_response_equal_to_the_key_scores_100() -> None:
    key = [[a, b, c], [d], [(4, 6), (8, 8)], [(5, 5)]]  # singletons and nested spans too
    result = score_documents([key, [[a]]], [key, [[a]]])
    for name in ("muc", "b3", "ceafe", "mentions"):
        assert (result[name]["recall"], result[name]["precision"], result[name]["f1"]) == (
            100, 100, 100), name
    assert result["conll_f1"] == 100


def test_an_empty_response_scores_0() -> None:
    # nothing found: every numerator 0; precision 0/0 is 0
    assert muc(KEY, []) == (0, 5, 0, 0)
    assert b_cubed(KEY, []) == (0, 7, 0, 0)
    assert ceaf_e(KEY, []) == (0, 2, 0, 0)
    result = score_documents([KEY], [[]])
    assert all(result[name][figure] == 0 for name in ("muc", "b3", "ceafe")
               for figure in ("recall", "precision", "f1"))
    assert result["conll_f1"] == 0
    empty = score_documents([[]], [[]])  # no key either: 0/0 everywhere
    assert empty["conll_f1"] == 0 and empty["b3"]["recall_denominator"] == 0


def test_singletons_count_in_b3_and_ceafe_not_in_muc() -> None:
    key = [[a], [b, c]]
    response = [[a], [b], [c]]
    # MUC: 1 key link, none found; the response has no link at all (0/0 -> 0)
    assert muc(key, response) == (0, 1, 0, 0)
    # B3 recall: {a}: 1²/1 = 1; {b,c}: 1²/2 + 1²/2 = 1; 2 / 3. Precision: 1 + 1 + 1 = 3 / 3.
    assert close(b_cubed(key, response), (2, 3, 3, 3))
    # CEAF-e: phi4({a},{a}) = 1, phi4({b,c},{b}) = 2/3 = phi4({b,c},{c}): 5/3 over 2 and 3
    assert close(ceaf_e(key, response), (5 / 3, 2, 5 / 3, 3))
    # a twinless singleton in the response: MUC untouched; B3 and CEAF-e precision pay for it
    assert muc([[a, b]], [[a, b], [h]]) == (1, 1, 1, 1)
    assert close(b_cubed([[a, b]], [[a, b], [h]]), (2, 2, 2, 3))  # 2²/2 = 2 over 3 mentions
    assert close(ceaf_e([[a, b]], [[a, b], [h]]), (1, 1, 1, 2))


def test_twinless_mentions() -> None:
    key = [[a, b]]
    response = [[a, h], [b, i]]  # each key mention linked to an invented one
    assert muc(key, response) == (0, 1, 0, 2)  # {a,b} cut in two; no response link is right
    # B3 recall: 1²/2 + 1²/2 = 1 over 2; precision 1²/2 + 1²/2 = 1 over 4
    assert close(b_cubed(key, response), (1, 2, 1, 4))
    # CEAF-e: phi4 = 2·1/4 for either response entity; only one can be aligned
    assert close(ceaf_e(key, response), (0.5, 1, 0.5, 2))
    assert mention_identification(key, response) == (2, 2, 2, 4)


def test_documents_are_micro_averaged() -> None:
    # MUC. Document 1: 1 key link, found (1/1, 1/1). Document 2: 4 key links, empty response
    # (0/4, 0/0). Micro: recall (1 + 0) / (1 + 4) = 20%, precision 1 / 1 = 100%; the mean of the
    # documents' figures would be 50% and 50%.
    keys = [[[a, b]], [[a, b, c, d, e]]]
    responses = [[[a, b]], []]
    result = score_documents(keys, responses)
    assert result["muc"]["recall"] == pytest.approx(20)
    assert result["muc"]["precision"] == pytest.approx(100)
    assert result["muc"]["f1"] == pytest.approx(100 / 3)  # 2·0.2·1 / 1.2
    macro = [score_documents([k], [r])["muc"]["recall"] for k, r in zip(keys, responses,
                                                                        strict=True)]
    assert np.mean(macro) == pytest.approx(50) != result["muc"]["recall"]
    # B3 recall: (2 + 0) / (2 + 5) = 28.57%, not (100 + 0) / 2
    assert result["b3"]["recall"] == pytest.approx(200 / 7)
    # CEAF-e: (1 + 0) / (1 + 1) key entities = 50% recall, 1 / 1 precision
    assert (result["ceafe"]["recall"], result["ceafe"]["precision"]) == (50, 100)


# --- repeated mentions -------------------------------------------------------------------------

def test_a_repeated_key_span_in_the_response_is_removed_after_its_first_occurrence() -> None:
    # in the same entity: {a,b,b} is {a,b}
    assert remove_repeated([[a, b]], [[a, b, b]]) == ([[a, b]], [(0, 2)])
    result = score_documents([[[a, b]]], [[[a, b, b]]])
    assert result["conll_f1"] == 100 and result["repeated_mentions"] == 1
    # in another entity: the first occurrence stays, entities in order
    assert remove_repeated([[a, b], [c]], [[a, b], [b, c]]) == ([[a, b], [c]], [(1, 0)])
    assert score_documents([[[a, b], [c]]], [[[a, b], [b, c]]])["conll_f1"] == 100
    # ... so the order of the response's entities matters: {b,c} {a,b} is {b,c} {a}
    key, response = [[a, b], [c]], [[b, c], [a, b]]
    assert remove_repeated(key, response) == ([[b, c], [a]], [(1, 1)])
    assert muc(key, response) == (0, 1, 0, 1)  # {a,b} cut in two; {b,c} links two entities
    # B3 recall: {a,b}: 1²/2 + 1²/2, {c}: 1²/1 -> 2 / 3; precision {b,c}: 1²/2 + 1²/2, {a}: 1
    assert close(b_cubed(key, response), (2, 3, 2, 3))
    # CEAF-e: phi4({a,b},{a}) = 2/3 and phi4({c},{b,c}) = 2/3 beat phi4({a,b},{b,c}) = 1/2
    assert close(ceaf_e(key, response), (4 / 3, 2, 4 / 3, 2))


def test_an_entity_left_empty_is_dropped() -> None:
    # {a} repeats a mention of {a,b}: it goes, and CEAF-e counts one response entity, not two
    assert ceaf_e([[a, b]], [[a, b], [a]]) == (1, 1, 1, 1)
    assert b_cubed([[a, b]], [[a, b], [a]]) == (2, 2, 2, 2)


def test_a_repeated_span_the_key_lacks_is_kept() -> None:
    # v8.01 removes repeats only of key spans: {h,h} stays, one link, two mentions
    response = [[a], [h, h]]
    assert remove_repeated([[a]], response) == ([[a], [h, h]], [])
    assert muc([[a]], response) == (0, 0, 0, 1)
    assert b_cubed([[a]], response) == (1, 1, 1, 3)
    assert ceaf_e([[a]], response) == (1, 1, 1, 2)
    assert mention_identification([[a]], response) == (1, 1, 1, 2)  # distinct spans


def test_a_span_repeated_in_the_key() -> None:
    # b is in both key entities; it belongs to the last ({b,c}) when a response mention is
    # placed, and counts in both key entities' sizes.
    key, response = [[a, b], [b, c]], [[a, b, c]]
    # MUC: key links 1 + 1; the response's a (of {a,b}) and b, c (of {b,c}): 0 + 1 right links
    assert muc(key, response) == (1, 2, 1, 2)
    # B3 per response mention: a: 2 of the response in {a,b} -> recall 2/2, precision 2/3;
    # b and c: 2 in {b,c} -> 2/2 and 2/3 each. Recall 3 over 4 key mentions, precision 2 / 3.
    assert close(b_cubed(key, response), (3, 4, 2, 3))
    # CEAF-e: phi4 = 2·2/5 for either key entity; one is aligned
    assert close(ceaf_e(key, response), (0.8, 2, 0.8, 1))
    assert mention_identification(key, response) == (3, 3, 3, 3)


# --- CEAF-e's alignment ------------------------------------------------------------------------

def brute_force_alignment(similarity: list[list[float]]) -> float:
    rows, columns = len(similarity), len(similarity[0]) if similarity else 0
    if rows <= columns:
        return max(sum(similarity[r][c] for r, c in enumerate(chosen))
                   for chosen in itertools.permutations(range(columns), rows))
    return max(sum(similarity[r][c] for c, r in enumerate(chosen))
               for chosen in itertools.permutations(range(rows), columns))


def test_the_alignment_is_optimal() -> None:
    rng = random.Random(2005)
    for _ in range(300):
        rows, columns = rng.randint(1, 6), rng.randint(1, 6)
        similarity = [[rng.choice([0.0, rng.random(), 0.5, 1.0]) for _ in range(columns)]
                      for _ in range(rows)]
        pairs = align(similarity)
        assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs})
        assert sum(similarity[r][c] for r, c in pairs) == pytest.approx(
            brute_force_alignment(similarity), abs=1e-12)
    assert align([]) == []


def test_the_alignment_matches_scipy_on_larger_matrices() -> None:
    optimize = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(12)
    for shape in [(30, 40), (40, 30), (50, 50), (1, 9), (9, 1)]:
        similarity = rng.random(shape) * (rng.random(shape) < 0.3)
        pairs = align(similarity)
        rows, columns = optimize.linear_sum_assignment(similarity, maximize=True)
        assert sum(similarity[r, c] for r, c in pairs) == pytest.approx(
            similarity[rows, columns].sum(), abs=1e-9)


def test_phi4() -> None:
    assert phi4([a, b, c], [a, b]) == 2 * 2 / 5
    assert phi4([a], [b]) == 0 and phi4([], []) == 0


# --- an independent implementation, by brute force ---------------------------------------------

def parts_by_links(entity: list[Any], other: list[list[Any]]) -> int:
    """The connected components of an entity's mentions, two linked when one entity of the
    other side holds both (breadth-first over the links)."""
    linked = {m: {n for n in entity if n != m and any(m in o and n in o for o in other)}
              for m in entity}
    seen: set[Any] = set()
    components = 0
    for mention in entity:
        if mention in seen:
            continue
        components += 1
        queue = [mention]
        while queue:
            node = queue.pop()
            if node not in seen:
                seen.add(node)
                queue.extend(linked[node] - seen)
    return components


def brute_muc(key: list[list[Any]], response: list[list[Any]]) -> tuple[float, ...]:
    recall = sum(len(k) - parts_by_links(k, response) for k in key)
    precision = sum(len(r) - parts_by_links(r, key) for r in response)
    return (recall, sum(len(k) - 1 for k in key), precision, sum(len(r) - 1 for r in response))


def brute_b_cubed(key: list[list[Any]], response: list[list[Any]]) -> tuple[float, ...]:
    """Per mention: |K(m) ∩ R(m)| / |K(m)| over the key's mentions, and the other way round."""
    def entity_of(m: Any, side: list[list[Any]]) -> set[Any]:
        return next((set(x) for x in side if m in x), set())

    recall = sum(len(set(k) & entity_of(m, response)) / len(k) for k in key for m in k)
    precision = sum(len(set(r) & entity_of(m, key)) / len(r) for r in response for m in r)
    return recall, sum(map(len, key)), precision, sum(map(len, response))


def brute_ceaf_e(key: list[list[Any]], response: list[list[Any]]) -> tuple[float, ...]:
    similarity = [[2 * len(set(k) & set(r)) / (len(k) + len(r)) for r in response] for k in key]
    best = brute_force_alignment(similarity) if key and response else 0.0
    return best, len(key), best, len(response)


def random_pair(rng: random.Random) -> tuple[list[list[Any]], list[list[Any]]]:
    """Key and response partitions of overlapping random sets of distinct spans."""
    spans = rng.sample([(s, s + w) for s in range(20) for w in range(3)], rng.randint(0, 12))
    def partition(mentions: list[Any], entities: int) -> list[list[Any]]:
        groups: list[list[Any]] = [[] for _ in range(entities)]
        for mention in mentions:
            groups[rng.randrange(entities)].append(mention)
        return [group for group in groups if group]

    key_spans = [s for s in spans if rng.random() < 0.8]
    response_spans = [s for s in spans if rng.random() < 0.7]
    return (partition(key_spans, rng.randint(1, 6)), partition(response_spans, rng.randint(1, 6)))


def test_random_documents_against_the_brute_force_implementation() -> None:
    rng = random.Random(2014)
    for trial in range(400):
        key, response = random_pair(rng)
        assert muc(key, response) == brute_muc(key, response), trial
        assert close(b_cubed(key, response), brute_b_cubed(key, response)), trial
        assert close(ceaf_e(key, response), brute_ceaf_e(key, response)), trial
    # several documents: numerators and denominators summed before dividing
    for trial in range(60):
        pairs = [random_pair(rng) for _ in range(rng.randint(1, 4))]
        result = score_documents([k for k, _ in pairs], [r for _, r in pairs])
        for name, brute in (("muc", brute_muc), ("b3", brute_b_cubed), ("ceafe", brute_ceaf_e)):
            totals = np.sum([brute(k, r) for k, r in pairs], axis=0)
            recall = 100 * totals[0] / totals[1] if totals[1] else 0.0
            precision = 100 * totals[2] / totals[3] if totals[3] else 0.0
            assert result[name]["recall"] == pytest.approx(recall, abs=1e-10), trial
            assert result[name]["precision"] == pytest.approx(precision, abs=1e-10), trial


# --- files -------------------------------------------------------------------------------------

def _write(path: Path, text: str) -> Path:
    text = textwrap.dedent(text).lstrip("\n")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


WORDS = ["Ormund", "the", "keeper", "Velis", "saw", "her", "lamp", "Tarrow", "gleamed"]


def _tale(cells: list[str], name: str = "(tale); part 0") -> str:
    """A document of two sentences (5 and 4 tokens), the cells as the coreference column."""
    sentences = [WORDS[:5], WORDS[5:]]
    return format_document(name, sentences, cells, "tale", 0)


KEY_CELLS = ["(0)", "(0)", "(0)", "(1)", "(1)", "(1)", "(1)", "-", "-"]
RESPONSE_CELLS = ["(0)", "(0)", "(1)", "(1)", "-", "(2)", "(2)", "(2)", "(2)"]

# what scorer.pl v8.01 prints for these two files (`scorer.pl <metric> KEY RESPONSE none`)
CLASSIC_REPORT = """\
METRIC muc:

====== TOTALS =======
Identification of Mentions: Recall: (6 / 7) 85.71%\tPrecision: (6 / 8) 75%\tF1: 79.99%
--------------------------------------------------------------------------
Coreference: Recall: (2 / 5) 40%\tPrecision: (2 / 5) 40%\tF1: 40%
--------------------------------------------------------------------------

METRIC bcub:

====== TOTALS =======
Identification of Mentions: Recall: (6 / 7) 85.71%\tPrecision: (6 / 8) 75%\tF1: 79.99%
--------------------------------------------------------------------------
Coreference: Recall: (2.91666666666667 / 7) 41.66%\tPrecision: (4 / 8) 50%\tF1: 45.45%
--------------------------------------------------------------------------

METRIC ceafe:

====== TOTALS =======
Identification of Mentions: Recall: (6 / 7) 85.71%\tPrecision: (6 / 8) 75%\tF1: 79.99%
--------------------------------------------------------------------------
Coreference: Recall: (1.3 / 2) 65%\tPrecision: (1.3 / 3) 43.33%\tF1: 51.99%
--------------------------------------------------------------------------

CoNLL F1 (mean of the MUC, B-cubed and CEAF-e F1): 45.82%
"""


def test_the_classic_example_as_files(tmp_path: Path) -> None:
    key = _write(tmp_path / "key.conll", _tale(KEY_CELLS))
    response = _write(tmp_path / "response.conll", _tale(RESPONSE_CELLS))
    [document] = read_conll(key)
    assert document.name == "(tale); part 0" and document.tokens == 9
    assert document.entities == (((0, 0), (1, 1), (2, 2)), ((3, 3), (4, 4), (5, 5), (6, 6)))
    assert document.line == 1 and document.lines[1] == (5, 6, 8, 9)  # a blank line after 5
    result = score_files(key, response)
    assert result["conll_f1"] == pytest.approx(score_documents([KEY], [RESPONSE])["conll_f1"])
    assert format_report(result) == CLASSIC_REPORT
    if OFFICIAL:
        _check_official(key, response, result)


def test_reading_cells_as_scorer_pl_reads_them(tmp_path: Path) -> None:
    # one-token mentions, then openings, then closings, whatever the order in the cell; '|'
    # optional; entities numbered by first occurrence (a one-token mention before an opening)
    cells = ["(3|(8)", "3)", "(8(8)", "8)|(5)", "-", "_", "(12)", "(12|(12", "12)", "12)"]
    words = [[f"w{t}" for t in range(len(cells))]]
    path = _write(tmp_path / "cells.conll", format_document("(cells)", words, cells, "c", 0))
    [document] = read_conll(path)
    assert document.entities == (((0, 0), (2, 2), (2, 3)), ((0, 1),), ((3, 3),),
                                 ((6, 6), (7, 8), (7, 9)))
    # two mentions of one entity that touch or cross read as the scorer reads them
    touching = format_column([[(0, 3), (3, 5)]], 6)
    assert touching == ["(0", "-", "-", "(0|0)", "-", "0)"]
    crossing = format_column([[(0, 3), (2, 5)]], 6)
    for cells, expected in ((touching, ((3, 3), (0, 5))), (crossing, ((2, 3), (0, 5)))):
        path = _write(tmp_path / "x.conll", format_document("(x)", [list("abcdef")], cells,
                                                            "x", 0))
        assert read_conll(path)[0].entities == (expected,)


def test_litbank_layout_with_an_empty_last_column(tmp_path: Path) -> None:
    # LitBank: tab-separated, eight '_' columns, the coreference column empty where it has none
    rows = [["lit", "0", "0", "Marrow", *["_"] * 8, "(4"], ["lit", "0", "1", "Hall", *["_"] * 8,
                                                            "4)"],
            ["lit", "0", "2", "stood", *["_"] * 8, ""], ["lit", "0", "3", "it", *["_"] * 8, "(4)"]]
    text = "#begin document (lit); part 0\n" + "".join("\t".join(r) + "\n" for r in rows)
    path = _write(tmp_path / "lit.conll", text + "\n#end document\n")
    [document] = read_conll(path)
    assert document.entities == (((0, 1), (3, 3)),) and document.tokens == 4


def test_score_coref_command(tmp_path: Path) -> None:
    key = _write(tmp_path / "key.conll.gz", _tale(KEY_CELLS))
    response = _write(tmp_path / "response.conll", _tale(RESPONSE_CELLS))
    result = elmo_exp("score", "coref", str(key), str(response))
    assert result.returncode == 0, result.stderr
    assert result.stdout == CLASSIC_REPORT
    bad = _write(tmp_path / "bad.conll", _tale([*RESPONSE_CELLS[:3], "(1x", *RESPONSE_CELLS[4:]]))
    result = elmo_exp("score", "coref", str(key), str(bad))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"error: {bad}:5: coreference column '(1x' is none of (N, N), (N), "
                             f"- or several of them\n")
    result = elmo_exp("score", "coref", str(key), str(tmp_path / "absent.conll"))
    assert result.returncode == 1 and "absent.conll: no such data file" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(("response", "message"), [
    (_tale(["(0"] + ["-"] * 8), ":2: the mention of entity 0 opened here is never closed"),
    (_tale(["-", "0)"] + ["-"] * 7), ":3: '0)' closes a mention of entity 0, but none is open"),
    (_tale(RESPONSE_CELLS, "(fable); part 0"), ":1: document '(fable); part 0' is not in"),
    (_tale(RESPONSE_CELLS) + _tale(RESPONSE_CELLS), ":14: document '(tale); part 0' again "
     "(first at line 1)"),
    (_tale(RESPONSE_CELLS).replace("\n\n", "\nmore\t0\t0\tnight\t-\n\n", 1),
     ":1: document '(tale); part 0' has 10 tokens, but "),
    ("tale\t0\t0\tOrmund\t(0)\n", ":1: token line outside '#begin document'"),
    (_tale(RESPONSE_CELLS).replace("#end document\n", ""), ":1: document '(tale); part 0' has "
     "no '#end document' line"),
])
def test_malformed_or_mismatched_files_are_one_line_errors(tmp_path: Path, response: str,
                                                           message: str) -> None:
    key = _write(tmp_path / "key.conll", _tale(KEY_CELLS))
    path = _write(tmp_path / "response.conll", response)
    with pytest.raises(DataError) as error:
        score_files(key, path)
    assert str(error.value).startswith(f"{path}{message}") and "\n" not in str(error.value)


def test_a_key_document_the_response_lacks(tmp_path: Path) -> None:
    key = _write(tmp_path / "key.conll", _tale(KEY_CELLS) + _tale(KEY_CELLS, "(song); part 0"))
    response = _write(tmp_path / "response.conll", _tale(RESPONSE_CELLS))
    with pytest.raises(DataError, match=rf"^{re.escape(str(key))}:14: document '\(song\); part "
                                        rf"0' is not in {re.escape(str(response))}$"):
        score_files(key, response)


def test_a_key_without_documents(tmp_path: Path) -> None:
    key = _write(tmp_path / "key.conll", "\n")
    response = _write(tmp_path / "response.conll", _tale(RESPONSE_CELLS))
    with pytest.raises(DataError, match=r"key.conll: no documents \(no '#begin document' line\)$"):
        score_files(key, response)


def test_more_than_ten_repeated_mentions_are_refused(tmp_path: Path) -> None:
    key = _write(tmp_path / "key.conll", _tale(KEY_CELLS))
    # each of the key's 7 mentions written again in a second entity: 7 repeats per document
    cells = [cell if cell == "-" else f"{cell}|(9)" for cell in KEY_CELLS]
    once = _write(tmp_path / "once.conll", _tale(cells))
    assert score_files(key, once)["repeated_mentions"] == 7
    assert format_report(score_files(key, once)).startswith(
        "Repeated mentions in the response, removed as scorer.pl removes them: 7\n")
    twice_key = _write(tmp_path / "key2.conll", _tale(KEY_CELLS) + _tale(KEY_CELLS, "(b); part 0"))
    twice = _write(tmp_path / "twice.conll", _tale(cells) + _tale(cells, "(b); part 0"))
    with pytest.raises(DataError, match=r"twice.conll:18: repeated mention number 11 \(3, 3\); "
                                        r"scorer.pl v8.01 refuses to score more than 10$"):
        score_files(twice_key, twice)


# --- the official scorer -----------------------------------------------------------------------

def _official_blocks(key: Path, response: Path) -> list[str] | None:
    assert SCORER_PL is not None
    blocks = []
    for metric in ("muc", "bcub", "ceafe"):
        run = subprocess.run(["perl", SCORER_PL, metric, str(key), str(response), "none"],
                             capture_output=True, text=True, timeout=120)
        if run.returncode:
            return None  # it refused (too many repeated mentions)
        lines = [line for line in run.stdout.split("\n")
                 if not line.startswith(("version:", "Repeated mention"))]
        blocks.append("\n".join(lines).strip())
    return blocks


def _check_official(key: Path, response: Path, result: dict[str, Any] | None,
                    exact: bool = True) -> None:
    theirs = _official_blocks(key, response)
    if result is None or theirs is None:
        assert result is None and theirs is None, (key, response)
        return
    ours = [block.split("\nCoNLL")[0].strip()
            for block in re.split(r"(?m)^METRIC \w+:\n", format_report(result))[1:]]
    if exact:
        assert ours == theirs
        return
    number = re.compile(r"[0-9][0-9.e+-]*")
    for mine, official in zip(ours, theirs, strict=True):
        for x, y in zip(number.findall(mine), number.findall(official), strict=True):
            assert float(x) == pytest.approx(float(y), rel=1e-9, abs=0.011)


def _random_clusters(rng: random.Random, tokens: int, repeats: bool) -> list[list[Any]]:
    clusters = []
    for _ in range(rng.randint(0, 8)):
        cluster = []
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            start = rng.randrange(tokens)
            cluster.append((start, min(tokens - 1, start + rng.choice([0, 0, 1, 2]))))
        clusters.append(cluster)
    if not repeats:  # each span once
        seen: set[Any] = set()
        unique = []
        for cluster in clusters:
            unique.append([m for m in dict.fromkeys(cluster) if m not in seen])
            seen.update(cluster)
        clusters = unique
    return [cluster for cluster in clusters if cluster]


@pytest.mark.skipif(not OFFICIAL, reason="set $COREF_SCORER_PL to the official scorer.pl")
def test_random_files_against_the_official_scorer(tmp_path: Path) -> None:
    rng = random.Random(801)
    for trial in range(120):
        documents = rng.choice([1, 1, 3])
        key_text = response_text = ""
        for number in range(documents):
            tokens = rng.randint(1, 40)
            key = _random_clusters(rng, tokens, rng.random() < 0.2)
            response = _random_clusters(rng, tokens, rng.random() < 0.4)
            response += [list(cluster) for cluster in key if rng.random() < 0.5]
            rng.shuffle(response)
            sentences = [[f"w{t}" for t in range(tokens)]]
            name = f"(doc{number}); part 0"
            key_text += format_document(name, sentences, format_column(key, tokens), "d", 0)
            response_text += format_document(name, sentences, format_column(response, tokens),
                                             "d", 0)
        key_path = _write(tmp_path / "key.conll", key_text)
        response_path = _write(tmp_path / "response.conll", response_text)
        try:
            result: dict[str, Any] | None = score_files(key_path, response_path)
        except DataError as error:
            assert "refuses" in str(error), trial
            result = None
        _check_official(key_path, response_path, result, exact=documents == 1)


# --- the dataset metric ------------------------------------------------------------------------

def _instances(rng: random.Random, count: int
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    instances, predictions = [], []
    for number in range(count):
        sentences = [[f"w{number}.{s}.{t}" for t in range(rng.randint(1, 8))]
                     for s in range(rng.randint(1, 4))]
        tokens = sum(map(len, sentences))
        gold = _random_clusters(rng, tokens, repeats=False)
        predicted = _random_clusters(rng, tokens, repeats=rng.random() < 0.3)
        instances.append({"document": sentences, "clusters": [[list(m) for m in c] for c in gold],
                          "document_id": f"story_{number}", "part": "0"})
        predictions.append({"clusters": [[list(m) for m in c] for c in predicted]})
    return instances, predictions


def test_dataset_metric_matches_the_files_it_writes(tmp_path: Path) -> None:
    entry = lookup("dataset_metric", "conll_coref")
    assert not isinstance(entry, str)
    metric = entry.builder()
    assert {"muc_f1", "b3_f1", "ceafe_f1", "coref_f1"} <= set(metric.names)
    rng = random.Random(7)
    for trial in range(25):
        instances, predictions = _instances(rng, rng.randint(1, 4))
        values = metric.compute(instances, predictions)
        assert set(values) == set(metric.names)
        path = tmp_path / f"response{trial}.conll"
        metric.write(instances, predictions, path)
        result = score_files(f"{path}.key", path)
        assert values["coref_f1"] == result["conll_f1"], trial
        for ours, name in (("muc", "muc"), ("b3", "b3"), ("ceafe", "ceafe"),
                           ("mentions", "mention")):
            for figure in ("precision", "recall", "f1"):
                assert values[f"{name}_{figure}"] == result[ours][figure], trial
        for figure in ("precision", "recall"):
            assert values[f"coref_{figure}"] == pytest.approx(
                np.mean([result[m][figure] for m in ("muc", "b3", "ceafe")]))
        if OFFICIAL and trial < 5:
            _check_official(Path(f"{path}.key"), path, result, exact=False)


def test_dataset_metric_file_layout(tmp_path: Path) -> None:
    instance = {"document": [["Quill", "rose"], ["She", "sang"]],
                "clusters": [[[0, 0], [2, 2]]], "document_id": "bk/quill", "part": "000"}
    prediction = {"clusters": [[[0, 1]], [[2, 2]]]}
    ConllCoref().write([instance], [prediction], tmp_path / "out")
    assert (tmp_path / "out").read_text(encoding="utf-8") == (
        "#begin document (bk/quill); part 000\n"
        "bk/quill\t000\t0\tQuill\t-\t-\t-\t-\t-\t-\t-\t(0\n"
        "bk/quill\t000\t1\trose\t-\t-\t-\t-\t-\t-\t-\t0)\n"
        "\n"
        "bk/quill\t000\t0\tShe\t-\t-\t-\t-\t-\t-\t-\t(1)\n"
        "bk/quill\t000\t1\tsang\t-\t-\t-\t-\t-\t-\t-\t-\n"
        "\n"
        "#end document\n")
    key = (tmp_path / "out.key").read_text(encoding="utf-8").splitlines()
    assert key[1].endswith("\t(0)") and key[4].endswith("\t(0)")
    # a perfect prediction scores 100; the instance's clusters may be lists of lists
    assert ConllCoref().compute([instance], [{"clusters": instance["clusters"]}])[
        "coref_f1"] == 100


def test_dataset_metric_rejects_bad_instances() -> None:
    instance = {"document": [["Quill", "rose"]], "clusters": [[[0, 0]]], "document_id": "q",
                "part": "0"}
    with pytest.raises(ValueError, match=r"document \(q\); part 0, predicted clusters: mention "
                                         r"\[1, 2\] is outside the document's 2 tokens"):
        ConllCoref().compute([instance], [{"clusters": [[[1, 2]]]}])
    with pytest.raises(ValueError, match="instances 0 and 1: the same document"):
        ConllCoref().compute([instance, instance], [{"clusters": []}, {"clusters": []}])


HAND_CASES = [
    (KEY, RESPONSE), (KEY, []), ([[a], [b, c]], [[a], [b], [c]]), ([[a, b]], [[a, b], [h]]),
    ([[a, b]], [[a, h], [b, i]]), ([[a, b]], [[a, b, b]]), ([[a, b], [c]], [[b, c], [a, b]]),
    ([[a, b]], [[a, b], [a]]), ([[a]], [[a], [h, h]]), ([[a, b], [b, c]], [[a, b, c]]),
]


@pytest.mark.skipif(not OFFICIAL, reason="set $COREF_SCORER_PL to the official scorer.pl")
@pytest.mark.parametrize(("key", "response"), HAND_CASES)
def test_the_hand_made_cases_against_the_official_scorer(tmp_path: Path, key: list[Any],
                                                         response: list[Any]) -> None:
    paths = []
    for name, clusters in (("key", key), ("response", response)):
        text = format_document("(hand)", [WORDS], format_column(clusters, len(WORDS)), "h", 0)
        paths.append(_write(tmp_path / name, text))
    # (as written, entities are numbered by their first token: [[b, c], [a, b]] reads as
    # [[a, b], [b, c]], whose second b is the repeat)
    _check_official(*paths, score_files(*paths))
