"""CoNLL-2005 SRL's official metric (srl-eval.pl's rules): props files, C-X merging, the counts,
the report, ``elmo-exp score srl`` and the ``srl_eval`` dataset metric. Sentences are invented.

With ``$SRL_EVAL_PL`` naming the official srl-eval.pl (and perl on the PATH), the random files
and the hand-made cases are also scored by it and its report must match ours byte for byte.
"""

from __future__ import annotations

import gzip
import os
import random
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from in_process import elmo_exp

from elmo_experiments.config.registry import lookup
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.srl.metric import (
    Argument,
    PropsSentence,
    SrlEval,
    discriminate,
    format_props,
    format_report,
    merge_continuations,
    read_props,
    score_files,
    score_props,
)
from elmo_experiments.tasks.srl.tags import spans_to_bio

ROOT = Path(__file__).resolve().parents[3]
SRL_EVAL_PL = os.environ.get("SRL_EVAL_PL")
OFFICIAL = bool(SRL_EVAL_PL and Path(SRL_EVAL_PL).is_file() and shutil.which("perl"))


def _write(path: Path, text: str) -> Path:
    text = textwrap.dedent(text).lstrip("\n")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _score(tmp_path: Path, gold: str, predicted: str) -> dict[str, Any]:
    result = score_files(_write(tmp_path / "gold.props", gold),
                         _write(tmp_path / "pred.props", predicted))
    if OFFICIAL:
        assert _official(tmp_path / "gold.props", tmp_path / "pred.props") == \
            format_report(result)
    return result


def _official(gold: Path, predicted: Path) -> str:
    done = subprocess.run(["perl", str(SRL_EVAL_PL), str(gold), str(predicted)],
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def _counts(result: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """(correct, excess, missed) per label, V included, and under "Overall"."""
    rows = {"Overall": result["overall"], **result["roles"], **result["excluded"]}
    return {label: (row["correct"], row["excess"], row["missed"]) for label, row in rows.items()}


# One sentence, one predicate ("ate"): The cat | ate | the fish | today
GOLD_ONE = """
    -    (A0*
    -    *)
    eat  (V*)
    -    (A1*
    -    *)
    -    (AM-TMP*)
    """


# --- hand-made cases ---------------------------------------------------------------------------

def test_exact_match(tmp_path: Path) -> None:
    result = _score(tmp_path, GOLD_ONE, GOLD_ONE)
    # A0 [0,1], A1 [3,4], AM-TMP [5] all right: 3 correct; V apart, right too.
    assert _counts(result) == {"Overall": (3, 0, 0), "A0": (1, 0, 0), "A1": (1, 0, 0),
                               "AM-TMP": (1, 0, 0), "V": (1, 0, 0)}
    assert result["overall"]["f1"] == 100.0
    assert (result["sentences"], result["propositions"], result["perfect_propositions"]) == \
        (1, 1, 1)
    assert result["perfect_percentage"] == 100.0


def test_label_mismatch(tmp_path: Path) -> None:
    predicted = GOLD_ONE.replace("(A1*", "(A2*")
    result = _score(tmp_path, GOLD_ONE, predicted)
    # A2 [3,4] has A1's span: excess for A2, and gold A1 missed. A0, AM-TMP right.
    # Overall 2 correct, 1 excess, 1 missed: P = R = F1 = 2/3.
    assert _counts(result) == {"Overall": (2, 1, 1), "A0": (1, 0, 0), "A1": (0, 0, 1),
                               "A2": (0, 1, 0), "AM-TMP": (1, 0, 0), "V": (1, 0, 0)}
    assert result["overall"]["precision"] == pytest.approx(200 / 3, abs=1e-12)
    assert result["overall"]["f1"] == pytest.approx(200 / 3, abs=1e-12)
    assert result["perfect_propositions"] == 0


def test_boundary_off_by_one(tmp_path: Path) -> None:
    predicted = """
        -    (A0*)
        -    *
        eat  (V*)
        -    (A1*
        -    *)
        -    (AM-TMP*)
        """
    result = _score(tmp_path, GOLD_ONE, predicted)
    # A0 predicted [0,0] against gold [0,1]: one excess A0, one missed A0; the others right.
    assert _counts(result) == {"Overall": (2, 1, 1), "A0": (0, 1, 1), "A1": (1, 0, 0),
                               "AM-TMP": (1, 0, 0), "V": (1, 0, 0)}


# "The deal, he said, is off": A1 [0,1] + C-A1 [4,5] around "he said" (A0 [2], V [3]).
GOLD_DISCONTINUOUS = """
    -    (A1*
    -    *)
    -    (A0*)
    say  (V*)
    -    (C-A1*
    -    *)
    """


def test_discontinuous_argument(tmp_path: Path) -> None:
    result = _score(tmp_path, GOLD_DISCONTINUOUS, GOLD_DISCONTINUOUS)
    # A1 + C-A1 is ONE argument A1 {[0,1], [4,5]}: A1 1 correct (not 2), no C-A1 row.
    assert _counts(result) == {"Overall": (2, 0, 0), "A0": (1, 0, 0), "A1": (1, 0, 0),
                               "V": (1, 0, 0)}


def test_discontinuous_argument_missing_a_span(tmp_path: Path) -> None:
    predicted = """
        -    (A1*
        -    *)
        -    (A0*)
        say  (V*)
        -    *
        -    *
        """
    result = _score(tmp_path, GOLD_DISCONTINUOUS, predicted)
    # Predicted A1 {[0,1]} is not gold A1 {[0,1], [4,5]}: 1 excess, 1 missed; A0 right.
    assert _counts(result) == {"Overall": (1, 1, 1), "A0": (1, 0, 0), "A1": (0, 1, 1),
                               "V": (1, 0, 0)}


def test_discontinuous_versus_two_plain_arguments(tmp_path: Path) -> None:
    predicted = """
        -    (A1*
        -    *)
        -    (A0*)
        say  (V*)
        -    (A1*
        -    *)
        """
    result = _score(tmp_path, GOLD_DISCONTINUOUS, predicted)
    # Two separate A1 {[0,1]} and A1 {[4,5]}, neither is the gold A1: 2 excess, 1 missed.
    assert _counts(result) == {"Overall": (1, 2, 1), "A0": (1, 0, 0), "A1": (0, 2, 1),
                               "V": (1, 0, 0)}


def test_adjacent_continuation_is_not_one_span(tmp_path: Path) -> None:
    gold = """
        see  (V*)
        -    (A1*
        -    *)
        """
    predicted = """
        see  (V*)
        -    (A1*)
        -    (C-A1*)
        """
    result = _score(tmp_path, gold, predicted)
    # The same tokens, but spans {[1], [2]} are not {[1,2]}: 1 excess and 1 missed A1.
    assert _counts(result) == {"Overall": (0, 1, 1), "A1": (0, 1, 1), "V": (1, 0, 0)}


def test_orphan_continuation(tmp_path: Path) -> None:
    gold = """
        -    (C-A1*)
        go   (V*)
        -    (C-A1*)
        -    *
        """
    predicted = """
        -    (A1*)
        go   (V*)
        -    *
        -    (C-A1*)
        """
    # Gold: the orphan C-A1 at 0 becomes A1, and the C-A1 at 2 joins it: A1 {[0], [2]}.
    # Predicted: A1 {[0], [3]}. 1 excess, 1 missed.
    assert merge_continuations([("C-A1", 0, 0), ("V", 1, 1), ("C-A1", 2, 2)]) == [
        Argument("A1", ((0, 0), (2, 2))), Argument("V", ((1, 1),))]
    assert _counts(_score(tmp_path, gold, predicted)) == {
        "Overall": (0, 1, 1), "A1": (0, 1, 1), "V": (1, 0, 0)}
    # A lone orphan C-A1 is scored as A1: the predicted (A1*) at 0 is right against it.
    assert _counts(_score(tmp_path, "-  (C-A1*)\ngo  (V*)\n", "-  (A1*)\ngo  (V*)\n")) == {
        "Overall": (1, 0, 0), "A1": (1, 0, 0), "V": (1, 0, 0)}


def test_continuation_joins_the_latest_argument() -> None:
    # A1 at 0, A1 at 2, C-A1 at 4: the continuation joins the A1 at 2.
    assert merge_continuations([("A1", 0, 0), ("C-A1", 4, 4), ("A1", 2, 2)]) == [
        Argument("A1", ((0, 0),)), Argument("A1", ((2, 2), (4, 4)))]
    # C-R-A0 joins R-A0; C-V joins V.
    assert merge_continuations([("R-A0", 0, 1), ("V", 2, 2), ("C-R-A0", 3, 3),
                                ("C-V", 4, 4)]) == [
        Argument("R-A0", ((0, 1), (3, 3))), Argument("V", ((2, 2), (4, 4)))]


def test_reference_argument(tmp_path: Path) -> None:
    gold = """
        -     (A0*)
        -     (R-A0*)
        rule  (V*)
        """
    predicted = """
        -     (A0*)
        -     (A0*)
        rule  (V*)
        """
    # R-A0 is a label of its own: the A0 at 1 is excess, the gold R-A0 missed.
    assert _counts(_score(tmp_path, gold, predicted)) == {
        "Overall": (1, 1, 1), "A0": (1, 1, 0), "R-A0": (0, 0, 1), "V": (1, 0, 0)}
    assert _counts(_score(tmp_path, gold, gold))["R-A0"] == (1, 0, 0)


def test_verb_is_apart(tmp_path: Path) -> None:
    predicted = """
        -    (A0*
        -    *)
        eat  *
        -    (A1*
        -    *)
        -    (AM-TMP*)
        """
    result = _score(tmp_path, GOLD_ONE, predicted)
    # V missed, but Overall counts only A0, A1, AM-TMP; still a perfect proposition.
    assert _counts(result) == {"Overall": (3, 0, 0), "A0": (1, 0, 0), "A1": (1, 0, 0),
                               "AM-TMP": (1, 0, 0), "V": (0, 0, 1)}
    assert list(result["excluded"]) == ["V"] and "V" not in result["roles"]
    assert result["perfect_propositions"] == 1
    report = format_report(result)
    assert report.splitlines()[-2].split() == ["V", "0", "0", "1", "0.00", "0.00", "0.00"]


# Two predicates: "He | said | she | left": said (A0 [0], V [1], A1 [2,3]); left (A0 [2], V [3]).
GOLD_TWO = """
    -     (A0*)   *
    say   (V*)    *
    -     (A1*    (A0*)
    leave *)      (V*)

    -
    -
    """
# The second sentence has no predicate: counted as a sentence, with no proposition.


def test_several_predicates_and_perfect_props(tmp_path: Path) -> None:
    predicted = """
        -     (A0*)   (A1*)
        say   (V*)    *
        -     (A1*    (A0*)
        leave *)      (V*)

        -
        -
        """
    result = _score(tmp_path, GOLD_TWO, predicted)
    # said: all right (perfect). left: extra A1 [0] (excess) -> not perfect.
    assert _counts(result) == {"Overall": (3, 1, 0), "A0": (2, 0, 0), "A1": (1, 1, 0),
                               "V": (2, 0, 0)}
    assert (result["sentences"], result["propositions"], result["perfect_propositions"]) == \
        (2, 2, 1)
    assert result["perfect_percentage"] == 50.0
    assert result["overall"]["precision"] == 75.0 and result["overall"]["recall"] == 100.0


def test_empty_predictions(tmp_path: Path) -> None:
    predicted = """
        -     *   *
        say   *   *
        -     *   *
        leave *   *

        -
        -
        """
    result = _score(tmp_path, GOLD_TWO, predicted)
    # Nothing predicted: all 3 arguments and both V missed; P, R, F1 0 (P undefined -> 0).
    assert _counts(result) == {"Overall": (0, 0, 3), "A0": (0, 0, 2), "A1": (0, 0, 1),
                               "V": (0, 0, 2)}
    assert result["overall"] == {"correct": 0, "excess": 0, "missed": 3,
                                 "precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert result["perfect_propositions"] == 0


def test_extra_arguments(tmp_path: Path) -> None:
    predicted = """
        -    (A0*
        -    *)
        eat  (V*)
        -    (A1*
        -    *)
        -    (AM-LOC*)
        """
    gold = GOLD_ONE.replace("(AM-TMP*)", "*")
    result = _score(tmp_path, gold, predicted)
    # Gold A0, A1; predicted also AM-LOC: 2 correct, 1 excess. P 2/3, R 1.
    assert _counts(result) == {"Overall": (2, 1, 0), "A0": (1, 0, 0), "A1": (1, 0, 0),
                               "AM-LOC": (0, 1, 0), "V": (1, 0, 0)}
    assert result["overall"]["recall"] == 100.0
    assert result["overall"]["f1"] == pytest.approx(80.0, abs=1e-12)


def test_duplicated_arguments() -> None:
    a0 = Argument("A0", ((0, 0),))
    v = Argument("V", ((1, 1),))
    # A gold argument matches once: the second identical prediction is excess.
    assert discriminate([a0, v], [a0, a0, v]) == ([a0, v], [a0], [])
    assert discriminate([a0, a0], [a0]) == ([a0], [], [a0])


def test_no_propositions(tmp_path: Path) -> None:
    result = _score(tmp_path, "-  \n-\n", "-\n-\n")
    assert (result["sentences"], result["propositions"], result["perfect_percentage"]) == \
        (1, 0, 0.0)
    assert result["roles"] == {} and result["excluded"] == {}


def test_report_layout(tmp_path: Path) -> None:
    predicted = """
        -     (A0*)   (A1*)
        say   (V*)    *
        -     (A2*    (A0*)
        leave *)      *

        -
        -
        """
    result = _score(tmp_path, GOLD_TWO, predicted)
    # What srl-eval.pl (2005/04/21) printed for these two files.
    assert format_report(result) == textwrap.dedent("""\
        Number of Sentences    :           2
        Number of Propositions :           2
        Percentage of perfect props :   0.00

                      corr.  excess  missed    prec.    rec.      F1
        ------------------------------------------------------------
           Overall        2       2       1    50.00   66.67   57.14
        ----------
                A0        2       0       0   100.00  100.00  100.00
                A1        0       1       1     0.00    0.00    0.00
                A2        0       1       0     0.00    0.00    0.00
        ------------------------------------------------------------
                 V        1       0       1   100.00   50.00   66.67
        ------------------------------------------------------------
        """)


# --- reading -----------------------------------------------------------------------------------

def test_read_props(tmp_path: Path) -> None:
    sentences = read_props(_write(tmp_path / "gold.props.gz", GOLD_TWO + "\n"))
    assert read_props(tmp_path / "gold.props") == sentences  # the .gz found from the plain name
    first, second = sentences
    assert first.targets == ("-", "say", "-", "leave") and first.predicates == (1, 3)
    assert first.columns == ((("A0", 0, 0), ("V", 1, 1), ("A1", 2, 3)),
                             (("A0", 2, 2), ("V", 3, 3)))
    assert first.line == 1 and second.line == 6 and second.columns == ()
    # closing tags may repeat the label; blank lines may hold spaces; no final blank line
    [sentence] = read_props(_write(tmp_path / "labelled.props",
                                   "-  (A0*\n-  *A0)\ngo (V*V)\n  \n"))
    assert sentence.columns == ((("A0", 0, 1), ("V", 2, 2)),)


@pytest.mark.parametrize(("text", "message"), [
    ("-  (A0*\ngo *\n", "props:1: column 2: argument A0 is never closed"),
    ("-  *)\ngo (V*)\n", "props:1: column 2:"),
    ("-  (A0*\n-  (A1*)\n-  *)\ngo (V*)\n", "props:2: column 2:"),
    ("-  (A0*\n-  *A1)\ngo (V*)\n", "props:2: column 2:"),
    ("-  A0\ngo (V*)\n", "props:1: column 2:"),
    ("-  *\ngo (V*) *\n", "props:2: 3 columns, but the sentence's first line (1) has 2"),
    ("-  *  *\ngo (V*) *\n", "props:1: 1 predicates in the first column, but 2 argument"),
    ("go (V*)\n\n-  *\n", "props:3: 0 predicates in the first column, but 1 argument"),
    ("go (V*)\n\n\ngo (V*)\n", "props:3: an empty sentence"),
    ("\ngo (V*)\n", "props:1: an empty sentence"),
])
def test_malformed_props_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.props"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_props(path)
    assert f"bad.{message}" in str(caught.value) and str(tmp_path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_trailing_blank_lines_are_fine(tmp_path: Path) -> None:
    assert len(read_props(_write(tmp_path / "p.props", "go (V*)\n\n\n\n"))) == 1


@pytest.mark.parametrize(("predicted", "message"), [
    # a token short: the predicted sentence has 3 tokens, the gold one 4
    ("-  (A0*)  *\nsay  (V*)  *\nleave  *  (V*)\n\n-\n-\n",
     "pred.props:1: sentence 1 has 3 tokens, but {gold}:1 has 4"),
    # another verb in the first column
    ("-  (A0*)  *\nsee  (V*)  *\n-  *  *\nleave  *  (V*)\n\n-\n-\n",
     "pred.props:2: the first column has 'see', but {gold}:2 has 'say'"),
    # a sentence missing
    ("-  (A0*)  *\nsay  (V*)  *\n-  *  *\nleave  *  (V*)\n",
     "{gold}:6: sentence 2 has no predicted counterpart"),
    # a sentence too many
    (GOLD_TWO + "\n-\n",
     "pred.props:9: sentence 3 has no gold counterpart"),
])
def test_misaligned_files_are_one_line(tmp_path: Path, predicted: str, message: str) -> None:
    gold = _write(tmp_path / "gold.props", GOLD_TWO)
    pred = _write(tmp_path / "pred.props", predicted)
    with pytest.raises(DataError) as caught:
        score_files(gold, pred)
    assert message.format(gold=gold) in str(caught.value)
    assert "\n" not in str(caught.value)


# --- an independent re-implementation on random props ------------------------------------------

LABELS = ["A0", "A1", "A2", "AM-TMP", "V", "C-A0", "C-A1", "C-A2", "C-V", "R-A0", "R-A1",
          "C-R-A0"]


def _random_spans(rng: random.Random, length: int) -> list[tuple[str, int, int]]:
    spans, token = [], 0
    while token < length:
        if rng.random() < 0.4:
            token += 1
            continue
        last = min(length - 1, token + rng.choice([0, 0, 1, 2, 3]))
        spans.append((rng.choice(LABELS), token, last))
        token = last + 1
    return spans


def _perturbed(rng: random.Random, spans: list[tuple[str, int, int]],
               length: int) -> list[tuple[str, int, int]]:
    if rng.random() < 0.15:
        return _random_spans(rng, length)
    out = []
    for label, first, last in spans:
        roll = rng.random()
        if roll < 0.1:
            continue                                     # dropped
        if roll < 0.2:
            label = rng.choice(LABELS)                   # relabelled
        elif roll < 0.3 and last > first:
            last -= 1                                    # a boundary off by one
        elif roll < 0.4 and last > first:
            split = rng.randint(first, last - 1)         # split into X + C-X
            base = label.removeprefix("C-")
            out.append((base, first, split))
            first, label = split + 1, rng.choice([f"C-{base}", base])
        out.append((label, first, last))
    if rng.random() < 0.2:                               # an extra one in a free token
        used = {t for _, a, b in out for t in range(a, b + 1)}
        free = [t for t in range(length) if t not in used]
        if free:
            token = rng.choice(free)
            out.append((rng.choice(LABELS), token, token))
    return sorted(out, key=lambda span: span[1])


def _tags(rng: random.Random, spans: list[tuple[str, int, int]], length: int) -> list[str]:
    """A Start-End column in a random style (closings with or without their label)."""
    tags = ["*"] * length
    for label, first, last in spans:
        close = rng.choice([")", f"{label})"])
        if first == last:
            tags[first] = f"({label}*{close}"
        else:
            tags[first], tags[last] = f"({label}*", f"*{close}"
    return tags


def _random_files(rng: random.Random, count: int) -> tuple[str, str]:
    gold_text, predicted_text = [], []
    for _ in range(count):
        length = rng.randint(1, 12)
        targets = [rng.choice(["go", "say", "run"]) if rng.random() < 0.3 else "-"
                   for _ in range(length)]
        gold_columns, predicted_columns = [], []
        for _ in range(sum(t != "-" for t in targets)):
            spans = _random_spans(rng, length)
            gold_columns.append(_tags(rng, spans, length))
            predicted_columns.append(_tags(rng, _perturbed(rng, spans, length), length))
        for columns, text in ((gold_columns, gold_text), (predicted_columns, predicted_text)):
            for token in range(length):
                text.append(" ".join([targets[token], *(c[token] for c in columns)]) + "\n")
            text.append("\n")
    return "".join(gold_text), "".join(predicted_text)


def _brute_arguments(column: list[str]) -> list[tuple[str, frozenset[tuple[int, bool]]]]:
    """Arguments as (label, {(token, whether a piece starts there)}), read character-wise."""
    pieces: list[tuple[str, list[int]]] = []
    open_piece: tuple[str, list[int]] | None = None
    for token, tag in enumerate(column):
        head, tail = tag.split("*")
        if head:
            open_piece = (head[1:], [])
        if open_piece is not None:
            open_piece[1].append(token)
        if tail:
            assert open_piece is not None
            pieces.append(open_piece)
            open_piece = None
    owner: list[int] = []                    # piece -> argument number
    labels: list[str] = []                   # argument number -> label
    for index, (label, _) in enumerate(pieces):
        if label[:2] == "C-":
            earlier = [j for j in range(index) if labels[owner[j]] == label[2:]]
            if earlier:
                owner.append(owner[earlier[-1]])
                continue
            label = label[2:]
        owner.append(len(labels))
        labels.append(label)
    members: list[set[tuple[int, bool]]] = [set() for _ in labels]
    for (_, tokens), number in zip(pieces, owner, strict=True):
        members[number] |= {(token, token == tokens[0]) for token in tokens}
    return [(label, frozenset(tokens)) for label, tokens in zip(labels, members, strict=True)]


def _brute_score(gold_text: str, predicted_text: str) -> dict[str, Any]:
    def sentences(text: str) -> list[list[list[str]]]:
        return [[line.split() for line in block.splitlines()]
                for block in text.strip("\n").split("\n\n")]

    counts: dict[str, list[int]] = {}
    propositions = perfect = 0
    gold_sentences, predicted_sentences = sentences(gold_text), sentences(predicted_text)
    for gold_rows, predicted_rows in zip(gold_sentences, predicted_sentences, strict=True):
        for column in range(1, len(gold_rows[0])):
            gold = _brute_arguments([row[column] for row in gold_rows])
            predicted = _brute_arguments([row[column] for row in predicted_rows])
            propositions += 1
            used = [False] * len(gold)
            wrong = 0
            for argument in predicted:
                for j, candidate in enumerate(gold):
                    if not used[j] and candidate == argument:
                        used[j] = True
                        counts.setdefault(argument[0], [0, 0, 0])[0] += 1
                        break
                else:
                    counts.setdefault(argument[0], [0, 0, 0])[1] += 1
                    wrong += argument[0] != "V"
            for j, candidate in enumerate(gold):
                if not used[j]:
                    counts.setdefault(candidate[0], [0, 0, 0])[2] += 1
                    wrong += candidate[0] != "V"
            perfect += wrong == 0
    overall = [sum(v[k] for label, v in counts.items() if label != "V") for k in range(3)]
    return {"sentences": len(gold_sentences), "propositions": propositions, "perfect": perfect,
            "counts": {"Overall": tuple(overall), **{k: tuple(v) for k, v in counts.items()}}}


def test_against_brute_force(tmp_path: Path) -> None:
    rng = random.Random(20050421)
    for trial in range(30):
        gold_text, predicted_text = _random_files(rng, 10)
        gold = _write(tmp_path / "gold.props", gold_text)
        pred = _write(tmp_path / "pred.props", predicted_text)
        result = score_files(gold, pred)
        expected = _brute_score(gold_text, predicted_text)
        assert _counts(result) == expected["counts"], trial
        assert result["sentences"] == expected["sentences"]
        assert result["propositions"] == expected["propositions"]
        assert result["perfect_propositions"] == expected["perfect"]
        if OFFICIAL:
            assert _official(gold, pred) == format_report(result), trial


def test_random_labels_cover_the_rules() -> None:
    # the random props above do exercise continuations, orphans and references
    gold_text, predicted_text = _random_files(random.Random(20050421), 300)
    text = gold_text + predicted_text
    assert text.count("(C-A1*") > 20 and text.count("(R-A0*") > 20 and "(C-R-A0*" in text


# --- the command line --------------------------------------------------------------------------


def test_score_srl_command(tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.props.gz", GOLD_TWO)
    pred = _write(tmp_path / "pred.props", GOLD_TWO.replace("(A1*    (A0*)", "(A1*    *"))
    result = elmo_exp("score", "srl", str(gold), str(pred))
    assert result.returncode == 0, result.stderr
    assert result.stdout == format_report(score_files(gold, pred))
    # said: all right; left: A0 missed. 2 correct, 0 excess, 1 missed.
    assert "   Overall        2       0       1   100.00   66.67   80.00\n" in result.stdout
    assert result.stdout.startswith("Number of Sentences    :           2\n")


def test_score_srl_errors_are_one_line(tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.props", GOLD_TWO)
    bad = _write(tmp_path / "bad.props", GOLD_TWO.replace("leave *)", "leave *"))
    result = elmo_exp("score", "srl", str(gold), str(bad))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"error: {bad}:3: column 2: argument A1 is never closed (the "
                             f"column ends at token 3)\n")
    other = _write(tmp_path / "other.props", GOLD_TWO.replace("say ", "tell"))
    result = elmo_exp("score", "srl", str(gold), str(other))
    assert result.returncode == 1
    assert result.stderr == (f"error: {other}:2: the first column has 'tell', but {gold}:2 "
                             f"has 'say'\n")
    result = elmo_exp("score", "srl", str(gold), str(tmp_path / "absent.props"))
    assert result.returncode == 1 and "absent.props: no such data file" in result.stderr
    assert result.stderr.count("\n") == 1


# --- the dataset metric ------------------------------------------------------------------------

def _instances(sentences: list[PropsSentence], predicted: list[PropsSentence]
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One instance per predicate, as an SRL reader makes them, and the predictions."""
    instances, records = [], []
    for sentence_id, (gold, guess) in enumerate(zip(sentences, predicted, strict=True)):
        length = len(gold.targets)
        for number, index in enumerate(gold.predicates):
            instances.append({
                "tokens": [f"w{sentence_id}.{t}" for t in range(length)],
                "tags": spans_to_bio(list(gold.columns[number]), length),
                "sentence_id": sentence_id, "predicate_index": index,
                "predicate_number": number, "lemma": gold.targets[index],
                "sentence_length": length})
            records.append({"tags": spans_to_bio(list(guess.columns[number]), length)})
    return instances, records


def test_dataset_metric_matches_the_files(tmp_path: Path) -> None:

    entry = lookup("dataset_metric", "srl_eval")
    assert not isinstance(entry, str)
    metric = entry.builder()
    assert isinstance(metric, SrlEval)
    assert metric.names == ("srl_precision", "srl_recall", "srl_f1")

    gold_text, predicted_text = _random_files(random.Random(7), 60)
    gold = read_props(_write(tmp_path / "gold.props", gold_text))
    predicted = read_props(_write(tmp_path / "pred.props", predicted_text))
    instances, records = _instances(gold, predicted)
    order = list(range(len(instances)))
    random.Random(8).shuffle(order)                      # any instance order will do
    instances = [instances[i] for i in order]
    records = [records[i] for i in order]
    values = metric.compute(instances, records)
    assert list(values) == list(metric.names)

    path = tmp_path / "out" / "srl.props"
    metric.write(instances, records, path)
    from_files = score_files(f"{path}.gold", path)
    overall = from_files["overall"]
    assert values == {"srl_precision": overall["precision"], "srl_recall": overall["recall"],
                      "srl_f1": overall["f1"]}
    # the same as scoring the original files' sentences that have a predicate
    with_predicates = [i for i, s in enumerate(gold) if s.predicates]
    direct = score_props([gold[i] for i in with_predicates],
                         [predicted[i] for i in with_predicates])
    assert _counts(from_files) == _counts(direct)
    assert from_files["sentences"] == len(with_predicates) < len(gold)
    assert from_files["perfect_propositions"] == direct["perfect_propositions"]


def test_dataset_metric_writes_props(tmp_path: Path) -> None:
    def instance(number: int, index: int, tags: list[str]) -> dict[str, Any]:
        return {"tokens": ["He", "said", "she", "left"], "tags": tags, "sentence_id": 4,
                "predicate_index": index, "predicate_number": number,
                "lemma": ["say", "leave"][number], "sentence_length": 4}

    instances = [instance(1, 3, ["O", "O", "B-A0", "B-V"]),
                 instance(0, 1, ["B-A0", "B-V", "B-A1", "I-A1"])]
    # predicted: a stray I-A1 starts an A1 (conlleval's reading); B-A0 I-A1 is A0 [0] + A1 [1]
    records = [{"tags": ["B-A0", "I-A1", "I-A0", "B-V"]},
               {"tags": ["B-A0", "B-V", "I-A1", "I-A1"]}]
    path = tmp_path / "srl.props"
    SrlEval().write(instances, records, path)
    assert path.read_text(encoding="utf-8") == (
        "-      (A0*)  (A0*)\n"
        "say     (V*)  (A1*)\n"
        "-      (A1*   (A0*)\n"
        "leave     *)   (V*)\n"
        "\n")  # aligned at the asterisks
    assert Path(f"{path}.gold").read_text(encoding="utf-8") == (
        "-      (A0*)     *\n"
        "say     (V*)     *\n"
        "-      (A1*   (A0*)\n"
        "leave     *)   (V*)\n"
        "\n")
    values = SrlEval().compute(instances, records)
    # said: A0, A1 right. left: A0 [2] right, A0 [0] and A1 [1] excess. 3 correct, 2 excess.
    assert values == {"srl_precision": 60.0, "srl_recall": 100.0, "srl_f1": 75.0}
    assert format_props(read_props(path)[0]) == path.read_text(encoding="utf-8")
