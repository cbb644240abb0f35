"""What a reader's last ``read`` took in and left out, and the one-line error for a split that
ends up without instances.

A reader that drops records (SQuAD questions without a usable answer, SRL sentences without a
predicate, SNLI pairs without a consensus label) keeps a ``read_report``: a ``ReadReport`` of
its last ``read``. A run names it when a split has no instances left (docs/framework.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from elmo_experiments.contracts import read_report
from elmo_experiments.errors import DataError

SPLIT_NAMES = {"train": "training", "validation": "validation", "test": "test"}


@dataclass
class ReadReport:
    """``read`` records of one kind (``unit``, plural: questions, sentences, pairs) were read;
    ``dropped`` counts those left out, by why (``"without a predicate"``)."""

    unit: str
    read: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def drop(self, why: str) -> None:
        self.dropped[why] += 1

    def describe(self) -> str:
        """``12 questions read, 12 dropped (9 with no answer inside ..., 3 whose ...)``."""
        unit = self.unit.removesuffix("s") if self.read == 1 else self.unit
        text = f"{self.read:,} {unit} read"
        total = sum(self.dropped.values())
        if total:
            reasons = ", ".join(f"{count:,} {why}" for why, count in self.dropped.most_common())
            text += f", {total:,} dropped ({reasons})"
        return text


def check_not_empty(split: str, path: str, instances: list[Any], reader: Any) -> None:
    """A one-line ``DataError`` when ``split`` has no instances: how many records the reader
    read and why each kind was dropped (its ``read_report``), naming the file."""
    if instances:
        return
    report = read_report(reader)
    why = (report.describe() if isinstance(report, ReadReport)
           else f"its reader ({type(reader).__name__}) gave none")
    raise DataError(f"{path}: no {SPLIT_NAMES.get(split, split)} instances: {why}")
