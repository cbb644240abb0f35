"""``reproduction/squad/alignment.py``: the README's alignment table and figures are those of the
committed results file, and the command's counts on a made-up file in the SQuAD format whose
alignment is worked out by hand. Needs no data."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from task_scripts import load_script

from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.data.tokenizers import tokenize_with_offsets

TASK = PROJECT_ROOT / "reproduction" / "squad"
README = TASK / "README.md"
RESULTS = TASK / "results" / "alignment.json"
DEFAULT = '-–—/~"“”[]():$'  # the reader's SPLIT_CHARACTERS, as the README's table shows it


def _load() -> ModuleType:
    return load_script(TASK / "alignment.py", "squad_alignment")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _find(pattern: str, text: str) -> re.Match[str]:
    """The first match of ``pattern``; a failure naming it when the README was reworded."""
    match = re.search(pattern, text)
    assert match is not None, f"the README no longer says {pattern!r}"
    return match


# --- the README and the results file ------------------------------------------------------

def test_the_readme_table_and_figures_are_the_results_files() -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    settings = {s["name"]: s for s in results["settings"]}
    default = settings["default"]
    readme = README.read_text(encoding="utf-8")
    start = readme.index("Measured on the files above")
    section = readme[start:readme.index("\n## ", start)]
    checked: list[str] = []  # every number of the section, as it is written there

    def check(written: str, value: int | str) -> None:
        assert (written if isinstance(value, str) else _number(written)) == value, written
        checked.append(written)

    check(_find(r"\(spaCy (\d+),", section)[1], int(results["spacy"].split(".")[0]))

    header = _find(r"train inexact \(of ([\d,]+)\) \| dev inexact \(of ([\d,]+)\)", section)
    totals = {"train": results["files"]["train"]["answers"],
              "dev": results["files"]["dev"]["answers"]}
    check(header[1], totals["train"])
    check(header[2], totals["dev"])
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(results["settings"])
    for row, setting in zip(rows, results["settings"], strict=True):
        first, *cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        if first == "none (spaCy's tokens)":
            characters = ""
        elif first.startswith("the default and "):
            characters = results["default_split_characters"] + _find(r"`(.*)`", first)[1]
        else:
            characters = _find(r"`(.*)`", first)[1]
        assert characters == setting["split_characters"], row
        bold = setting["name"] == "default"
        assert (first == f"**`{DEFAULT}` (default)**") == bold, row
        for cell, split in zip(cells, ("train", "dev"), strict=True):
            assert cell.startswith("**") == bold, row
            match = re.fullmatch(r"\**([\d,]+) \(([\d.]+)%\)\**", cell)
            assert match is not None, row
            count, percent = match.groups()
            check(count, setting[split]["inexact"])
            check(percent, f"{100 * setting[split]['inexact'] / totals[split]:.2f}")
    assert results["default_split_characters"] == DEFAULT

    prose = " ".join(section.split())
    none, ours = settings["none"]["train"]["tokens"], default["train"]["tokens"]
    grown = _find(r"adds ([\d.]+)% to the train passages' tokens \(([\d,]+) -> ([\d,]+)\)",
                      prose)
    check(grown[1], f"{100 * (ours - none) / none:.1f}")
    check(grown[2], none)
    check(grown[3], ours)
    assert 'No answer is "not found" in either file, and none needed the search' in prose
    assert all(default[split][key] == 0 for split in totals for key in ("not_found", "searched"))
    inside = _find(r"Of the ([\d,]+) train answers still inexact, ([\d,]+) begin or end "
                       r"between two letters or digits", prose)
    check(inside[1], default["train"]["inexact"])
    check(inside[2], default["train"]["inexact_inside_word"])
    elsewhere = _find(r"([\d,]+) of the ([\d,]+) \(dev: ([\d,]+) of ([\d,]+)\) have another "
                          r"occurrence in their paragraph that aligns exactly", prose)
    check(elsewhere[1], default["train"]["inexact_exact_elsewhere"])
    check(elsewhere[2], default["train"]["inexact"])
    check(elsewhere[3], default["dev"]["inexact_exact_elsewhere"])
    check(elsewhere[4], default["dev"]["inexact"])

    # nothing else in the section is a number (code spans are examples, not measurements)
    without_code = re.sub(r"`[^`]*`", "", section)
    assert Counter(re.findall(r"\d+(?:[.,]\d+)*", without_code)) == Counter(checked)


def test_the_readme_counts_of_the_files_are_the_results_files() -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    train, dev = results["files"]["train"], results["files"]["dev"]
    page = " ".join(README.read_text(encoding="utf-8").split())
    counts = _find(r"Counts: train ([\d,]+) articles, ([\d,]+) paragraphs, ([\d,]+) questions "
                       r"with one answer each; dev ([\d,]+) articles, ([\d,]+) paragraphs, "
                       r"([\d,]+) questions with ([\d,]+) gold answers", page)
    assert [_number(n) for n in counts.groups()] == [
        train["articles"], train["paragraphs"], train["questions"], dev["articles"],
        dev["paragraphs"], dev["questions"], dev["answers"]]
    assert train["answers"] == train["questions"]
    repeated = _find(r"occurs more than once \(([\d,]+) train answers, ([\d,]+) dev answers\)",
                         page)
    assert [_number(n) for n in repeated.groups()] == [train["repeated"], dev["repeated"]]
    log = _find(r"dev-v1\.1\.json\.gz: ([\d,]+) questions, ([\d,]+) answers; ([\d,]+) aligned "
                    r"exactly, ([\d,]+) inexactly, ([\d,]+) not found", page)
    reader = results["checks"]["dev_reader_alignment"]
    assert [_number(n) for n in log.groups()] == [
        reader[key] for key in ("questions", "answers", "exact", "inexact", "not_found")]
    default = next(s for s in results["settings"] if s["name"] == "default")["dev"]
    assert [reader[k] for k in ("exact", "inexact")] == [default["exact"], default["inexact"]]


def test_the_results_file_names_its_inputs_and_code() -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    # recorded before reproduction/ was called tasks/: the file keeps the command it ran
    assert results["command"] in ("python reproduction/squad/alignment.py",
                                  "python tasks/squad/alignment.py")
    assert re.fullmatch(r"[0-9a-f]{40}", results["commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", results["date"])
    for split in ("train", "dev"):
        assert results["inputs"][split]["file"].startswith(f"squad/{split}-v1.1.json")
        assert re.fullmatch(r"[0-9a-f]{64}", results["inputs"][split]["sha256"])


# --- the command on a made-up file --------------------------------------------------------

# Train: three paragraphs, twelve answers. Where each answer begins or ends inside a spaCy
# token, and which setting first splits that token there (the table's settings, in order).
TRAIN = [
    ("Orla Quist lived 1838–1907 in mid-2015 terms.", [
        ("Orla Quist", 0),  # exact everywhere
        ("1838", 17),  # inside 1838–1907: exact once – is split
        ("2015", 34),  # inside mid-2015: exact once - is split
        ("Quis", 5),  # inside Quist, between two letters: never exact
    ]),
    ("It cost US$100 in 1830.[n 2] overall, said Sammy Davis Jr. and the golden gold team.", [
        ("$100", 10),  # spaCy's US$ 100: exact once $ is split (the default)
        ("1830", 18),  # inside 1830.[n: exact once [ is split
        ("Sammy Davis Jr", 43),  # spaCy's Jr.: exact only when . is split
        ("gold", 67),  # inside golden (the first occurrence): never exact, but gold is
        ("overall", 0),  # a wrong answer_start: found by searching, exact
        ("Velmar", 0),  # not in the paragraph
    ]),
    ('The said:"Velmar" road runs ~5 km today.', [
        ("5", 29),  # inside ~5: exact once ~ is split
        ("Velmar", 10),  # inside said:"Velmar: exact once " is split
    ]),
]
# Dev: one paragraph, two questions with five answers.
DEV = [("Velmar rose in 1990–95 and fell in mid-2001.",
        [[("1990", 15), ("1990–95", 15), ("in 1990–95", 12)], [("2001", 39), ("mid-2001", 35)]])]

# Per setting, in the table's order: inexact answers and passage tokens, worked out above.
TRAIN_INEXACT = [9, 7, 6, 5, 4, 3, 2]
# 8 + 20 + 9 spaCy tokens; 1838 – 1907, mid - 2015; ~ 5; said : " Velmar; 1830 . [ n; US $; Jr .
TRAIN_TOKENS = [37, 41, 42, 45, 48, 49, 50]
DEV_INEXACT = [2, 0, 0, 0, 0, 0, 0]  # 1990 and 2001, until - and – are split
DEV_TOKENS = [9, 13, 13, 13, 13, 13, 13]  # 9 spaCy tokens; 1990 – 95, mid - 2001


def _write(root: Path) -> None:
    (root / "squad").mkdir(parents=True)
    train = [{"context": context, "qas": [
        {"id": f"t{p}-{q}", "question": "What?", "answers": [{"text": t, "answer_start": s}]}
        for q, (t, s) in enumerate(answers)]} for p, (context, answers) in enumerate(TRAIN)]
    dev = [{"context": context, "qas": [
        {"id": f"d{p}-{q}", "question": "What?",
         "answers": [{"text": t, "answer_start": s} for t, s in answers]}
        for q, answers in enumerate(questions)]} for p, (context, questions) in enumerate(DEV)]
    for split, paragraphs in (("train", train), ("dev", dev)):
        document = {"version": "1.1", "data": [{"title": "Ostrand", "paragraphs": paragraphs}]}
        (root / "squad" / f"{split}-v1.1.json").write_text(json.dumps(document),
                                                           encoding="utf-8")


def test_the_hand_made_file_answers_point_where_the_comments_say() -> None:
    for context, answers in TRAIN:
        for text, start in answers:
            if text not in ("overall", "Velmar") or start:
                assert context[start:start + len(text)] == text, text
    for context, questions in DEV:
        for text, start in (a for answers in questions for a in answers):
            assert context[start:start + len(text)] == text, text


def test_the_command_on_a_hand_made_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) \
        -> None:
    alignment = _load()
    _write(tmp_path / "data")
    out = tmp_path / "results" / "alignment.json"
    alignment.main(["--data-root", str(tmp_path / "data"), "--out", str(out)])
    results = json.loads(out.read_text(encoding="utf-8"))

    assert [s["name"] for s in results["settings"]] == [
        "none", "-–—", "-–—/~", '-–—/~"“”', '-–—/~"“”[]()', "default", "default+."]
    assert results["files"] == {
        "train": {"articles": 1, "paragraphs": 3, "questions": 12, "answers": 12,
                  "repeated": 1},  # gold, in golden and alone
        "dev": {"articles": 1, "paragraphs": 1, "questions": 2, "answers": 5, "repeated": 0}}
    for number, setting in enumerate(results["settings"]):
        assert setting["train"] == {
            "answers": 12, "exact": 12 - 1 - TRAIN_INEXACT[number],
            "inexact": TRAIN_INEXACT[number], "not_found": 1, "searched": 1,
            "tokens": TRAIN_TOKENS[number],
            "inexact_inside_word": 2,  # Quis, gold
            "inexact_exact_elsewhere": 1,  # gold
        }, setting["name"]
        assert setting["dev"] == {
            "answers": 5, "exact": 5 - DEV_INEXACT[number], "inexact": DEV_INEXACT[number],
            "not_found": 0, "searched": 0, "tokens": DEV_TOKENS[number],
            "inexact_inside_word": 0, "inexact_exact_elsewhere": 0}, setting["name"]
    assert results["checks"]["dev_reader_alignment"] == {
        "questions": 2, "answers": 5, "exact": 5, "inexact": 0, "not_found": 0, "searched": 0,
        "dropped": 0, "instances": 2}
    assert results["inputs"]["dev"]["file"] == "squad/dev-v1.1.json"

    table = capsys.readouterr().out.splitlines()
    assert table[0] == "| `split_characters` | train inexact (of 12) | dev inexact (of 5) |"
    assert table[2] == "| none (spaCy's tokens) | 9 (75.00%) | 2 (40.00%) |"
    assert table[7] == f"| **`{DEFAULT}` (default)** | **3 (25.00%)** | **0 (0.00%)** |"
    assert table[8] == "| the default and `.` (not used) | 2 (16.67%) | 0 (0.00%) |"


def test_tokens_made_from_spacys_are_the_readers() -> None:
    alignment = _load()
    texts = [context for context, _ in TRAIN + DEV] + [
        "A well-known, state-of-the-art 1990–1995 survey ~5 km north/south of US$100.",
        'Citations.[12], page refs.:441, 12"-long, x“y, “Velmar”-class and 11:28 a.m.',
        "A\u00a0non-breaking space, a thin\u2009one, and tabs\tand\n\nnewlines."]
    for text in texts:
        words = alignment.spacy_words(text)
        for _, characters in alignment.SETTINGS:
            assert alignment.passage_tokens(words, characters) == \
                tokenize_with_offsets(text, characters), (text, characters)


def test_missing_files_are_a_one_line_error(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    alignment = _load()
    with pytest.raises(SystemExit) as error:
        alignment.main(["--data-root", str(tmp_path), "--out", str(tmp_path / "a.json")])
    message = str(error.value)
    assert "\n" not in message and "train-v1.1.json" in message and "--data-root" in message
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    with pytest.raises(SystemExit, match="ELMO_DATA_DIR"):
        alignment.main(["--out", str(tmp_path / "a.json")])
    assert not (tmp_path / "a.json").exists()
