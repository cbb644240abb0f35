"""GAP's official figures, counted as its scorer (``gap_scorer.py``, Webster et al. 2018) counts
them, and its file formats.

Each example makes two binary decisions, "the pronoun refers to A" and "... to B", each
scored against the gold ``A-coref`` / ``B-coref``: true positive (both true), false positive
(predicted only), true negative (neither), false negative (gold only). The counts are pooled
over both decisions of every example (``overall``), and apart for the examples whose pronoun
is masculine (he, him, his) and feminine (she, her, hers); precision, recall and F1 in
percent from each pool, and the bias, F1(feminine) / F1(masculine) (None where either is 0).
As in the official scorer, an example the system file does not answer (or answers with a
label other than TRUE/FALSE: a warning names the first) counts as a false negative for each
of its two decisions (a system file that answers no gold ID is warned about too);
system IDs that the gold file lacks are ignored, and a repeated system ID's first answer
counts.

The system file (what ``elmo-exp score gap`` reads and ``write`` writes): no header, one line
per example, ``ID<TAB>A-coref<TAB>B-coref`` with TRUE or FALSE.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from elmo_experiments.config.registry import register
from elmo_experiments.data.files import atomic_write_text, iter_lines, resolve_data_path
from elmo_experiments.errors import DataError
from elmo_experiments.metrics.metric import State, Unit, total

logger = logging.getLogger("elmo_experiments")
POOLS = (("overall", "Overall"), ("masculine", "Masculine"), ("feminine", "Feminine"))
GENDER_POOL = {"M": "masculine", "F": "feminine"}


@dataclass
class Counts:
    """One pool's decisions."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def add(self, gold: bool, system: bool | None) -> None:
        if system is None or (gold and not system):
            self.fn += 1
        elif gold:
            self.tp += 1
        elif system:
            self.fp += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return 100.0 * self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class Example:
    """One example's gold (or system) decisions; ``gender`` only on gold (``M``/``F``)."""

    a_coref: bool | None
    b_coref: bool | None
    gender: str | None = None


def count(gold: dict[str, Example], system: dict[str, Example]) -> dict[str, Counts]:
    """The three pools' counts of ``system``'s answers to every gold example."""
    pools = {name: Counts() for name, _ in POOLS}
    missing = Example(None, None)
    for example_id, truth in gold.items():
        answer = system.get(example_id, missing)
        for pool in ("overall", GENDER_POOL[truth.gender or ""]):
            pools[pool].add(bool(truth.a_coref), answer.a_coref)
            pools[pool].add(bool(truth.b_coref), answer.b_coref)
    return pools


def bias(pools: dict[str, Counts]) -> float | None:
    """F1(feminine) / F1(masculine); None where either is 0 (the scorer prints ``-``)."""
    masculine, feminine = pools["masculine"].f1, pools["feminine"].f1
    return feminine / masculine if masculine and feminine else None


def figures(pools: dict[str, Counts]) -> dict[str, float]:
    """``gap_f1`` (overall), ``gap_precision``, ``gap_recall``, the same for ``masculine_`` and
    ``feminine_``, and ``gap_bias`` (0.0 where the scorer prints ``-``)."""
    values: dict[str, float] = {}
    for name, _ in POOLS:
        prefix = "gap" if name == "overall" else f"gap_{name}"
        for figure in ("precision", "recall", "f1"):
            values[f"{prefix}_{figure}"] = getattr(pools[name], figure)
    values["gap_bias"] = bias(pools) or 0.0
    return values


def format_report(pools: dict[str, Counts]) -> str:
    """The official scorecard's lines: per pool recall, precision and F1 (one decimal) and the
    four counts, then the bias (two decimals, ``-`` where undefined)."""
    lines = []
    for name, title in POOLS:
        c = pools[name]
        lines += [f"{title} recall: {c.recall:.1f} precision: {c.precision:.1f} f1: {c.f1:.1f}",
                  f"\t\ttp {c.tp:d}\tfp {c.fp:d}", f"\t\tfn {c.fn:d}\ttn {c.tn:d}"]
    ratio = bias(pools)
    lines.append(f"Bias (F/M): {'-' if ratio is None else f'{ratio:.2f}'}")
    return "\n".join(lines) + "\n"


def _label(value: str) -> bool | None:
    low = value.strip().lower()
    return True if low == "true" else False if low == "false" else None


def read_gold(path: str | Path) -> dict[str, Example]:
    """A GAP TSV (header first): each example's gold labels and its pronoun's gender."""
    from elmo_experiments.tasks.gap.reader import (
        COLUMNS,
        check_id,
        check_one_referent,
        gender_of,
        is_header,
        line_end_hint,
    )

    resolved = resolve_data_path(path)
    found: dict[str, Example] = {}
    lines: dict[str, int] = {}
    header = False
    for number, line in iter_lines(resolved):
        cells = line.rstrip("\r\n").split("\t")
        if not line.strip():
            continue
        where = f"{resolved}:{number}"
        if not header:  # the first line must be the header, never an example read as one
            if not is_header(cells):
                raise DataError(f"{where}: a GAP gold file starts with its header, the "
                                f"{len(COLUMNS)} columns {' '.join(COLUMNS)}, tab-separated"
                                f"{line_end_hint(line)}")
            header = True
            continue
        if len(cells) != len(COLUMNS):
            raise DataError(f"{where}: {len(cells)} tab-separated columns, a GAP file has "
                            f"{len(COLUMNS)}{line_end_hint(line)}")
        row = dict(zip(COLUMNS, cells, strict=True))
        gender = gender_of(row["Pronoun"])
        if gender is None:
            raise DataError(f"{where}: Pronoun {row['Pronoun']!r} has no gender the scorer "
                            f"knows (he, him, his, she, her, hers)")
        labels = [_label(row[c]) for c in ("A-coref", "B-coref")]
        if None in labels:
            raise DataError(f"{where}: A-coref and B-coref must be TRUE or FALSE")
        check_one_referent(labels[0], labels[1], where)
        check_id(row["ID"], where)
        if row["ID"] in found:  # the reader refuses it too: one gold answer an example
            raise DataError(f"{where}: ID {row['ID']!r} again (first on line "
                            f"{lines[row['ID']]})")
        lines[row["ID"]] = number
        found[row["ID"]] = Example(labels[0], labels[1], gender)
    if not found:
        raise DataError(f"{resolved}: no gold GAP examples")
    return found


def read_system(path: str | Path) -> dict[str, Example]:
    """A system TSV (no header): ``ID A-coref B-coref``; a label other than TRUE/FALSE is no
    answer (the scorer's "Unexpected label"), a repeated ID's first line counts."""
    resolved = resolve_data_path(path)
    found: dict[str, Example] = {}
    unexpected: list[str] = []
    for number, line in iter_lines(resolved):
        if not line.strip():
            continue
        cells = line.rstrip("\r\n").split("\t")
        if "\r" in line.rstrip("\r\n"):
            raise DataError(f"{resolved}:{number}: its lines end in a lone CR, old Mac style: "
                            f"convert them to LF")
        if len(cells) < 3:
            raise DataError(f"{resolved}:{number}: expected ID, A-coref and B-coref, "
                            f"tab-separated")
        answer = Example(_label(cells[1]), _label(cells[2]))
        unexpected += [f"line {number} {cell.strip()!r}" for cell, label
                       in zip(cells[1:3], (answer.a_coref, answer.b_coref), strict=True)
                       if label is None]
        found.setdefault(cells[0], answer)
    if not found:
        raise DataError(f"{resolved}: no system answers")
    if unexpected:
        logger.warning("%s: %d label%s neither TRUE nor FALSE (first: %s), each scored as no "
                       "answer, as the official scorer's \"Unexpected label\"", resolved,
                       len(unexpected), "" if len(unexpected) == 1 else "s", unexpected[0])
    return found


def score_files(gold: str | Path, system: str | Path) -> dict[str, Counts]:
    truth, answers = read_gold(gold), read_system(system)
    matched = sum(example_id in truth for example_id in answers)
    if not matched:
        logger.warning("%s: none of its %d IDs is in %s (first: %r), so every example counts "
                       "as unanswered; are they the same split?", system, len(answers), gold,
                       next(iter(answers)))
    return count(truth, answers)


def _meta(instance: dict[str, Any], key: str) -> Any:
    return instance[key] if key in instance else instance["metadata"][key]


class GapMetric:
    """The official figures over an evaluation pass (``figures``'s names); instances carry
    ``id``, ``a_coref``, ``b_coref`` and ``gender``, predictions ``a_coref`` and ``b_coref``.
    ``write`` writes the predictions in the scorer's system format."""

    names = ("gap_precision", "gap_recall", "gap_f1", "gap_masculine_precision",
             "gap_masculine_recall", "gap_masculine_f1", "gap_feminine_precision",
             "gap_feminine_recall", "gap_feminine_f1", "gap_bias")
    primary = "gap_f1"
    unit = "example"

    def units(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
              ) -> list[Unit]:
        """One unit per example (``id``): its decisions' counts in each pool."""
        units = []
        for instance, record in zip(instances, predictions, strict=True):
            gold = Example(_meta(instance, "a_coref"), _meta(instance, "b_coref"),
                           _meta(instance, "gender"))
            pools = count({"": gold}, {"": Example(record["a_coref"], record["b_coref"])})
            units.append((str(_meta(instance, "id")),
                          {name: asdict(counts) for name, counts in pools.items()}))
        return units

    def from_state(self, state: State) -> dict[str, float]:
        return figures({name: Counts(**state.get(name, {})) for name, _ in POOLS})

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        return self.from_state(total(self.units(instances, predictions)))

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        atomic_write_text(path, "".join(
            f"{_meta(instance, 'id')}\t{str(bool(record['a_coref'])).upper()}\t"
            f"{str(bool(record['b_coref'])).upper()}\n"
            for instance, record in zip(instances, predictions, strict=True)))


register("dataset_metric", "gap")(GapMetric)
