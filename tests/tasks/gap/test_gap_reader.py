"""GAP's TSV reader: character offsets to token spans, labels and gender, and a one-line error
naming the file, the line and the field for an offset that misses its string."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.errors import DataError
from elmo_experiments.tasks.gap.reader import COLUMNS, GapReader

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "reproduction" / "gap" / "sample"
HEADER = "\t".join(COLUMNS) + "\n"
TEXT = "Ann Berg met Cleo Dunn in Rome, and she liked her."


def _row(text: str = TEXT, pronoun: str = "she", pronoun_offset: object = 36,
         a: str = "Ann Berg", a_offset: object = 0, a_coref: str = "TRUE",
         b: str = "Cleo Dunn", b_offset: object = 13, b_coref: str = "FALSE") -> str:
    return "\t".join(["t-1", text, pronoun, str(pronoun_offset), a, str(a_offset), a_coref, b,
                      str(b_offset), b_coref, "https://example.org/x"]) + "\n"


def _read(tmp_path: Path, *rows: str) -> list[dict]:
    path = tmp_path / "gap.tsv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return GapReader({}).read(path)


def _spanned(instance: dict, key: str) -> str:
    start, end = instance[key]
    return " ".join(instance["text"][start: end + 1])


def test_offsets_become_token_spans(tmp_path: Path) -> None:
    [instance] = _read(tmp_path, _row())
    assert [_spanned(instance, k) for k in ("pronoun", "a", "b")] == ["she", "Ann Berg",
                                                                       "Cleo Dunn"]
    assert instance["a"] == (0, 1) and instance["b"] == (3, 4)
    assert (instance["id"], instance["a_coref"], instance["b_coref"], instance["gender"]) == \
        ("t-1", True, False, "F")
    assert instance["mentions"] == {"pronoun": "she", "a": "Ann Berg", "b": "Cleo Dunn"}


def test_a_name_inside_a_token_covers_the_whole_token(tmp_path: Path) -> None:
    text = "Ann Berg's friend Cleo Dunn-Smith waved, and she smiled."
    [instance] = _read(tmp_path, _row(text, "she", text.index("she"), "Ann Berg", 0, "TRUE",
                                      "Cleo Dunn", text.index("Cleo"), "FALSE"))
    assert _spanned(instance, "a") == "Ann Berg"
    assert _spanned(instance, "b").startswith("Cleo Dunn")


def test_the_samples_read(tmp_path: Path) -> None:
    for split, count in (("train", 8), ("dev", 4), ("test", 4)):
        instances = GapReader({}).read(SAMPLE / f"{split}.tsv")
        assert len(instances) == count
        for instance in instances:
            assert instance["mentions"]["pronoun"] == _spanned(instance, "pronoun")
            assert instance["mentions"]["a"] == _spanned(instance, "a")
            assert {instance["gender"]} <= {"M", "F"}
            assert not (instance["a_coref"] and instance["b_coref"])


NFD_TEXT = "Ane\u0301 Berg met Cleo Dunn, and she smiled."


@pytest.mark.parametrize(("row", "message"), [
    (_row(a_offset=2), r"gap\.tsv:2: A-offset 2: the text there reads 'n Berg m', not "
                       r"'Ann Berg'$"),
    (_row(b_offset=200), r"gap\.tsv:2: B-offset 200: 'Cleo Dunn' does not fall on the text "
                         r"\(50 characters\)$"),
    (_row(pronoun_offset="x"), r"gap\.tsv:2: Pronoun-offset 'x' is not a character offset$"),
    (_row(pronoun_offset="3\u00b2"), r"gap\.tsv:2: Pronoun-offset '3²' is not a character "
                                      r"offset$"),  # isdigit() says yes, int() no
    (_row(a_offset="\u0663"), r"gap\.tsv:2: A-offset '٣' is not a character offset$"),
    (_row("Ann Berg met Cleo Dunn there, and she left.", "her",
          "Ann Berg met Cleo Dunn there".index("here")),
     r"gap\.tsv:2: Pronoun-offset 24: 'her' is part of the word 'there', not a word of its "
     r"own$"),
    (_row(pronoun="it", pronoun_offset=0), r"gap\.tsv:2: Pronoun-offset 0: the text there "
                                           r"reads 'An', not 'it'$"),
    (_row(pronoun="they", pronoun_offset=TEXT.index("and")),
     r"Pronoun-offset \d+: the text there reads 'and ', not 'they'$"),
    (_row(a_coref="yes"), r"gap\.tsv:2: A-coref is 'yes', not TRUE or FALSE$"),
    (_row(b_coref="TRUE"), r"gap\.tsv:2: A-coref and B-coref are both TRUE"),
    ("t-1\tonly three\tcolumns\n", r"gap\.tsv:2: 3 tab-separated columns, GAP has 11"),
    (_row(pronoun_offset="9" * 5_000), r"gap\.tsv:2: Pronoun-offset '9{30}' is not a character "
                                       r"offset$"),  # int() refuses over 4,300 digits
    (_row(b="Ann Berg", b_offset=0), r"gap\.tsv:2: A 'Ann Berg' and B 'Ann Berg' share words: "
                                     r"each mention must be words of its own$"),
    (_row(b="Berg", b_offset=4), r"gap\.tsv:2: A 'Ann Berg' and B 'Berg' share words"),
    (_row(a="she", a_offset=36), r"gap\.tsv:2: Pronoun 'she' and A 'she' share words"),
    ("\t".join(["  ", *_row().split("\t")[1:]]), r"gap\.tsv:2: the ID is empty$"),
    (_row(NFD_TEXT, "she", NFD_TEXT.index("she"), "An\u00e9 Berg", 0, "TRUE", "Cleo Dunn",
          NFD_TEXT.index("Cleo")),  # the text decomposed (NFD), the name composed (NFC)
     r"gap\.tsv:2: A-offset 0: the text there reads 'Ane\u0301 Ber', not 'An\u00e9 Berg' \(the "
     r"same letters in another Unicode normalization: normalize the file, e\.g\. to NFC\)$"),
])
def test_a_bad_row_is_one_line_naming_file_line_and_field(tmp_path: Path, row: str,
                                                          message: str) -> None:
    with pytest.raises(DataError, match=message) as caught:
        _read(tmp_path, row)
    assert "\n" not in str(caught.value)


def test_a_pronoun_without_gender_is_refused(tmp_path: Path) -> None:
    text = "Ann Berg met Cleo Dunn in Rome, and they talked."
    with pytest.raises(DataError, match=r"gap\.tsv:2: Pronoun 'they' is not one of he, him"):
        _read(tmp_path, _row(text, "they", text.index("they")))


def test_the_header_and_repeated_ids_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "gap.tsv"
    path.write_text(_row(), encoding="utf-8")
    with pytest.raises(DataError, match=r"gap\.tsv:1: the header must be the 11 columns ID Text"):
        GapReader({}).read(path)
    with pytest.raises(DataError, match=r"gap\.tsv:3: ID 't-1' again \(first on line 2\)"):
        _read(tmp_path, _row(), _row())


def test_text_to_instance_names_its_arguments_in_errors() -> None:
    """What the server and predict pass are arguments, not TSV columns: errors call them so."""
    with pytest.raises(DataError, match=r"^input: pronoun_offset -13: 'her' does not fall on "):
        GapReader({}).text_to_instance(TEXT, "her", -13, "Ann Berg", 0, "Cleo Dunn", 13)
    with pytest.raises(DataError, match=r"^input: a 'Ann Berg' and b 'Ann Berg' share words"):
        GapReader({}).text_to_instance(TEXT, "her", TEXT.index("her"), "Ann Berg", 0,
                                       "Ann Berg", 0)


def test_text_to_instance_is_unlabelled() -> None:
    instance = GapReader({}).text_to_instance(TEXT, "her", TEXT.index("her"), "Ann Berg", 0,
                                              "Cleo Dunn", 13)
    assert instance["a_coref"] is None and instance["gender"] == "F"
    assert _spanned(instance, "pronoun") == "her"


def test_a_file_with_lone_cr_line_ends_says_so(tmp_path: Path) -> None:
    path = tmp_path / "gap.tsv"
    path.write_bytes((HEADER + _row()).replace("\n", "\r").encode("utf-8"))
    with pytest.raises(DataError, match=r"convert them to LF\)$"):
        GapReader({}).read(path)
