"""GAP's official figures (gap_scorer.py's counting) against a hand-computed example, the
system format, and ``elmo-exp score gap``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from elmo_experiments.cli import cli
from elmo_experiments.tasks.gap.metric import Counts, GapMetric, format_report, score_files
from elmo_experiments.tasks.gap.reader import COLUMNS

# gold: ID, pronoun, A-coref, B-coref
GOLD = [("m1", "he", True, False), ("m2", "his", False, True), ("m3", "him", False, False),
        ("f1", "she", True, False), ("f2", "her", False, True), ("f3", "hers", True, False)]
# the system: m1 right; m2 says A (fp, fn); m3 says B (fp); f1 right; f2 says neither (fn);
# f3 missing (two false negatives, as the official scorer counts a missing answer)
SYSTEM = [("m1", True, False), ("m2", True, False), ("m3", False, True), ("f1", True, False),
          ("f2", False, False), ("zz", True, False)]  # zz: not in gold, ignored

# hand-computed: masculine decisions (gold, system): m1 (T,T)=tp (F,F)=tn; m2 (F,T)=fp
# (T,F)=fn; m3 (F,F)=tn (F,T)=fp -> tp 1 fp 2 fn 1 tn 2: P 33.3, R 50.0, F1 40.0.
# feminine: f1 tp, tn; f2 (F,F)=tn (T,F)=fn; f3 missing: fn fn -> tp 1 fp 0 fn 3 tn 2:
# P 100, R 25, F1 40.0. Overall: tp 2 fp 2 fn 4 tn 4: P 50, R 33.3, F1 40.0. Bias 1.00.
REPORT = """\
Overall recall: 33.3 precision: 50.0 f1: 40.0
\t\ttp 2\tfp 2
\t\tfn 4\ttn 4
Masculine recall: 50.0 precision: 33.3 f1: 40.0
\t\ttp 1\tfp 2
\t\tfn 1\ttn 2
Feminine recall: 25.0 precision: 100.0 f1: 40.0
\t\ttp 1\tfp 0
\t\tfn 3\ttn 2
Bias (F/M): 1.00
"""


def _tf(value: bool) -> str:
    return "TRUE" if value else "FALSE"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.tsv"
    text = "Ann met Bea and he or she or his or her or him or hers here."
    gold.write_text("\t".join(COLUMNS) + "\n" + "".join(
        f"{i}\t{text}\t{p}\t{text.index(' ' + p + ' ') + 1}\tAnn\t0\t{_tf(a)}\tBea\t4\t{_tf(b)}"
        f"\thttps://example.org\n" for i, p, a, b in GOLD))
    system = tmp_path / "system.tsv"
    system.write_text("".join(f"{i}\t{_tf(a)}\t{_tf(b)}\n" for i, a, b in SYSTEM))
    return gold, system


def test_the_scorecard_is_the_hand_computed_one(files: tuple[Path, Path]) -> None:
    pools = score_files(*files)
    assert format_report(pools) == REPORT
    assert pools["overall"].f1 == pytest.approx(40.0)
    assert pools["masculine"].precision == pytest.approx(100 / 3)


def test_elmo_exp_score_gap_prints_it(files: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(cli, ["score", "gap", *map(str, files)])
    assert result.exit_code == 0, result.output
    assert result.output == REPORT


def test_the_bias_is_undefined_when_a_gender_scores_zero() -> None:
    from elmo_experiments.tasks.gap.metric import bias, figures

    pools = {"overall": Counts(tp=1), "masculine": Counts(tp=1), "feminine": Counts(fn=2)}
    assert bias(pools) is None
    assert format_report(pools).endswith("Bias (F/M): -\n")
    assert figures(pools)["gap_bias"] == 0.0


def test_the_dataset_metric_agrees_and_writes_the_system_format(
        files: tuple[Path, Path], tmp_path: Path) -> None:
    answers = {i: (a, b) for i, a, b in SYSTEM}
    instances = [{"id": i, "a_coref": a, "b_coref": b, "gender": "M" if i[0] == "m" else "F"}
                 for i, _, a, b in GOLD if i in answers]  # f3 has no prediction here
    predictions = [{"a_coref": answers[x["id"]][0], "b_coref": answers[x["id"]][1]}
                   for x in instances]
    metric = GapMetric()
    values = metric.compute(instances, predictions)
    assert set(values) == set(metric.names)
    # without f3's two missing answers: feminine tp 1 fp 0 fn 1 -> F1 66.7; bias 66.7 / 40
    assert values["gap_feminine_f1"] == pytest.approx(200 / 3)
    assert values["gap_masculine_f1"] == pytest.approx(40.0)
    assert values["gap_bias"] == pytest.approx((200 / 3) / 40.0)
    written = tmp_path / "written.tsv"
    metric.write(instances, predictions, written)
    assert written.read_text().splitlines()[:2] == ["m1\tTRUE\tFALSE", "m2\tTRUE\tFALSE"]
    assert score_files(files[0], written)["masculine"] == score_files(*files)["masculine"]


def test_a_gold_file_without_its_header_is_refused_not_cut_short(files: tuple[Path, Path]
                                                                  ) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    gold.write_text(gold.read_text().split("\n", 1)[1])  # the header gone: m1 would be dropped
    with pytest.raises(DataError) as info:
        score_files(gold, system)
    assert str(info.value) == (f"{gold}:1: a GAP gold file starts with its header, the 11 "
                               f"columns {' '.join(COLUMNS)}, tab-separated")


def test_a_gold_row_with_both_names_true_is_refused_as_the_reader_refuses_it(
        files: tuple[Path, Path]) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    gold.write_text(gold.read_text().replace("\tTRUE\tBea\t4\tFALSE", "\tTRUE\tBea\t4\tTRUE", 1))
    with pytest.raises(DataError, match=r"gold.tsv:2: A-coref and B-coref are both TRUE"):
        score_files(gold, system)


@pytest.mark.parametrize(("change", "error"), [
    (lambda text: text + text.splitlines()[1] + "\n", r"gold.tsv:8: ID 'm1' again \(first on "
                                                     r"line 2\)$"),
    (lambda text: text.replace("\nm1\t", "\n \t", 1), r"gold.tsv:2: the ID is empty$")])
def test_a_gold_id_twice_or_empty_is_refused_as_the_reader_refuses_it(
        files: tuple[Path, Path], change, error: str) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    gold.write_text(change(gold.read_text()))
    with pytest.raises(DataError, match=error):
        score_files(gold, system)


def test_labels_other_than_true_or_false_and_unmatched_ids_are_warned_about(
        files: tuple[Path, Path], caplog: pytest.LogCaptureFixture) -> None:
    gold, system = files
    system.write_text(system.read_text().replace("m1\tTRUE", "m1\tmaybe"))
    pools = score_files(gold, system)  # m1's A decision: no answer, a false negative
    assert (pools["overall"].tp, pools["overall"].fn) == (1, 5)
    assert [r.getMessage() for r in caplog.records] == [
        f"{system}: 1 label neither TRUE nor FALSE (first: line 1 'maybe'), each scored as no "
        f"answer, as the official scorer's \"Unexpected label\""]
    caplog.clear()
    system.write_text("x1\tTRUE\tFALSE\nx2\tFALSE\tFALSE\n")
    assert score_files(gold, system)["overall"].f1 == 0.0
    assert [r.getMessage() for r in caplog.records] == [
        f"{system}: none of its 2 IDs is in {gold} (first: 'x1'), so every example counts as "
        f"unanswered; are they the same split?"]


def test_a_gold_file_with_lone_cr_line_ends_says_so(files: tuple[Path, Path]) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    gold.write_bytes(gold.read_bytes().replace(b"\n", b"\r"))
    with pytest.raises(DataError, match=r"gold.tsv:1: a GAP gold file starts with its header.*"
                                        r" \(its lines end in a lone CR, old Mac style: convert "
                                        r"them to LF\)$"):
        score_files(gold, system)


def test_a_system_file_with_lone_cr_line_ends_is_refused_not_scored_zero(
        files: tuple[Path, Path]) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    system.write_bytes(system.read_bytes().replace(b"\n", b"\r"))
    with pytest.raises(DataError, match=r"system.tsv:1: its lines end in a lone CR"):
        score_files(gold, system)


def test_a_gold_body_with_lone_cr_line_ends_after_its_header_says_so(
        files: tuple[Path, Path]) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    header, body = gold.read_bytes().split(b"\n", 1)
    gold.write_bytes(header + b"\n" + body.replace(b"\n", b"\r"))
    with pytest.raises(DataError, match=r"gold.tsv:2: \d+ tab-separated columns.*lone CR"):
        score_files(gold, system)


def test_a_bom_where_two_gold_files_were_joined_is_refused(files: tuple[Path, Path]) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    gold.write_text(gold.read_text().replace("\nm2\t", "\n\ufeffm2\t", 1))
    with pytest.raises(DataError, match=r"gold.tsv:3: the ID '\\ufeffm2' has spaces or "
                       r"invisible characters at its ends$"):
        score_files(gold, system)


def test_a_gold_id_with_spaces_at_its_ends_is_refused(files: tuple[Path, Path]) -> None:
    from elmo_experiments.errors import DataError

    gold, system = files
    gold.write_text(gold.read_text().replace("\nm2\t", "\nm2 \t", 1))
    with pytest.raises(DataError, match=r"gold.tsv:3: the ID 'm2 ' has spaces or invisible "
                       r"characters at its ends$"):
        score_files(gold, system)
