"""A split left without instances is one line: how many records were read, why each kind was
dropped; a reader without a report is named."""

from __future__ import annotations

import pytest

from elmo_experiments.data.read_report import ReadReport, check_not_empty
from elmo_experiments.errors import DataError


def test_describe_counts_each_reason_most_frequent_first() -> None:
    report = ReadReport("questions", read=1)
    assert report.describe() == "1 question read"
    report.read = 12_000
    for why in ["b", "a", "a"]:
        report.drop(why)
    assert report.describe() == "12,000 questions read, 3 dropped (2 a, 1 b)"


def test_check_not_empty() -> None:
    class Reader:
        read_report = ReadReport("sentences", 2)

    Reader.read_report.drop("without a predicate")
    check_not_empty("train", "train.txt", [{}], Reader())
    with pytest.raises(DataError) as info:
        check_not_empty("validation", "dev.txt", [], Reader())
    assert str(info.value) == ("dev.txt: no validation instances: 2 sentences read, 1 dropped "
                               "(1 without a predicate)")

    class Plugin:
        pass

    with pytest.raises(DataError) as info:
        check_not_empty("train", "mine.txt", [], Plugin())
    assert str(info.value) == "mine.txt: no training instances: its reader (Plugin) gave none"
