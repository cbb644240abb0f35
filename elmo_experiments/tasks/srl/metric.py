"""CoNLL-2005 SRL's official evaluation: props files (Start-End columns) and the figures
``srl-eval.pl`` (Carreras & Màrquez, version of 2005/04/21) prints for them.

A props file has one line per token and a blank line after each sentence; its first column holds
the target verbs (``-`` on other rows), then comes one Start-End column per predicate, in token
order: ``(A1*`` opens A1, ``*)`` or ``*A1)`` closes it, ``(V*)`` is one token, ``*`` nothing.

Columns are read and written with ``elmo_experiments.tasks.srl.tags``. srl-eval.pl's rules, as
implemented here:

- a column's phrases become the proposition's arguments in token order; a ``C-X`` phrase joins
  the latest argument ``X`` before it (one discontinuous argument, several spans); a ``C-X``
  with no ``X`` before it becomes an argument ``X`` of its own (later ``C-X`` join it).
  ``R-X`` is a label like any other;
- a predicted argument is correct when a gold argument has its label and exactly its spans;
  each gold argument is matched once, so a second identical prediction is excess. A right span
  with a wrong label is excess for the predicted label and missed for the gold one;
- ``V`` is counted apart (its own rows, after the others) and left out of Overall; a
  proposition is perfect when it has no excess and no missed argument other than V;
- precision, recall and F1 in percent, 0 when undefined; F1 from the two percentages.

Where this is stricter than the script: the predicted file must have the gold file's sentences,
tokens and first column, and one column per predicate (srl-eval.pl warns about a differing verb
and counts that proposition's gold arguments missed, ignores surplus columns, and dies only on
sentence lengths); nested or overlapping brackets are an error (the script nests them; no
CoNLL-2005 proposition has them); and an empty sentence (two blank lines in a row, or one at the
start) is an error, since srl-eval.pl silently stops reading there.

Checked: the official srl-eval.pl (run with perl 5.36 outside this repository) printed the same
report as ``format_report``, byte for byte, on 300 random pairs of props files of 1-25 sentences
(labels A0-A2, AM-TMP, V, C-X, R-X, C-R-X; labels, boundaries and continuations perturbed), on
the files ``SrlEval.write`` wrote for some of them, and on the hand-made cases of
``tests/tasks/srl/test_srl_metric.py``; those tests rerun the comparison when ``$SRL_EVAL_PL`` names
the script. The ``srl_eval`` dataset metric writes only sentences that have a predicate (the
others have no instance), so its sentence count is of those.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from elmo_experiments.config.registry import register
from elmo_experiments.data.files import atomic_write, iter_lines, resolve_data_path
from elmo_experiments.errors import DataError
from elmo_experiments.metrics.metric import State, Unit, total
from elmo_experiments.tasks.srl.tags import (
    BracketError,
    Span,
    bio_to_spans,
    brackets_to_spans,
    spans_to_brackets,
)

NO_PREDICATE = "-"
CONTINUATION = "C-"
EXCLUDED = frozenset({"V"})  # srl-eval.pl's %excluded: reported apart, not in Overall
RULE = "-" * 60


class Argument(NamedTuple):
    """An argument as scored: its label and its spans (first, last token), in token order."""

    label: str
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class PropsSentence:
    """One sentence of a props file: ``targets`` is the first column, ``columns`` has per
    predicate (token order) its column's spans ``(label, first, last)``, labels as written
    (``C-A1`` too). ``source`` and ``line`` (the sentence's first line) name it in errors."""

    targets: tuple[str, ...]
    columns: tuple[tuple[Span, ...], ...]
    source: str = "<props>"
    line: int = 1

    @property
    def predicates(self) -> tuple[int, ...]:
        return tuple(i for i, target in enumerate(self.targets) if target != NO_PREDICATE)


# --- arguments ---------------------------------------------------------------------------------

def merge_continuations(phrases: Iterable[Span]) -> list[Argument]:
    """srl-eval.pl's arguments of one proposition: ``C-X`` joins the latest ``X`` before it;
    an orphan ``C-X`` becomes an ``X`` argument of its own."""
    labels: list[str] = []
    spans: list[list[tuple[int, int]]] = []
    latest: dict[str, int] = {}
    for label, start, end in sorted(phrases, key=lambda phrase: (phrase[1], -phrase[2])):
        if label.startswith(CONTINUATION):
            label = label[len(CONTINUATION):]
            if label in latest:
                spans[latest[label]].append((start, end))
                continue
        latest[label] = len(labels)
        labels.append(label)
        spans.append([(start, end)])
    return [Argument(label, tuple(pieces)) for label, pieces in zip(labels, spans, strict=True)]


# --- props files -------------------------------------------------------------------------------

def _sentence(rows: list[list[str]], name: str, first: int) -> PropsSentence:
    targets = tuple(row[0] for row in rows)
    predicates = sum(target != NO_PREDICATE for target in targets)
    if len(rows[0]) - 1 != predicates:
        raise DataError(f"{name}:{first}: {predicates} predicates in the first column, but "
                        f"{len(rows[0]) - 1} argument columns")
    columns = []
    for column in range(1, len(rows[0])):
        try:
            columns.append(tuple(brackets_to_spans([row[column] for row in rows])))
        except BracketError as error:
            raise DataError(f"{name}:{first + error.index}: column {column + 1}: "
                            f"{error.reason}") from None
    return PropsSentence(targets, tuple(columns), name, first)


def read_props(path: str | Path) -> list[PropsSentence]:
    """The sentences of a props file (``.gz`` too). A malformed tag, unbalanced brackets, a
    ragged line, a column count other than the predicates' or an empty sentence is a one-line
    ``DataError`` naming the file and line."""
    resolved = resolve_data_path(path)
    name = str(resolved)
    sentences: list[PropsSentence] = []
    rows: list[list[str]] = []
    first = 0
    empty_at: int | None = None  # a blank line that ends no sentence
    for number, text in iter_lines(resolved):
        fields = text.split()
        if not fields:
            if rows:
                sentences.append(_sentence(rows, name, first))
                rows = []
            elif empty_at is None:
                empty_at = number
            continue
        if empty_at is not None:
            raise DataError(f"{name}:{empty_at}: an empty sentence (a blank line at the start or "
                            f"a second one in a row); srl-eval.pl would stop reading here")
        if not rows:
            first = number
        elif len(fields) != len(rows[0]):
            raise DataError(f"{name}:{number}: {len(fields)} columns, but the sentence's first "
                            f"line ({first}) has {len(rows[0])}")
        rows.append(fields)
    if rows:
        sentences.append(_sentence(rows, name, first))
    return sentences


def format_props(sentence: PropsSentence) -> str:
    """A sentence's props lines (aligned, each ending in a newline) and the blank line after."""
    length = len(sentence.targets)
    columns = [spans_to_brackets(spans, length) for spans in sentence.columns]
    width = max(len(target) for target in sentence.targets) if length else 0
    lines = [[f"{target:<{width}}"] for target in sentence.targets]
    for tags in columns:
        left = max(tag.index("*") for tag in tags) + 1
        right = max(len(tag) - tag.index("*") for tag in tags)
        for line, tag in zip(lines, tags, strict=True):
            star = tag.index("*") + 1
            line.append(f"{tag[:star]:>{left}}{tag[star:]:<{right - 1}}")
    return "".join("  ".join(line).rstrip() + "\n" for line in lines) + "\n"


# --- scoring -----------------------------------------------------------------------------------

def _check_pair(gold: PropsSentence, predicted: PropsSentence, index: int) -> None:
    where_gold = f"{gold.source}:{gold.line}"
    if len(predicted.targets) != len(gold.targets):
        raise DataError(f"{predicted.source}:{predicted.line}: sentence {index + 1} has "
                        f"{len(predicted.targets)} tokens, but {where_gold} has "
                        f"{len(gold.targets)}")
    for token, (mine, theirs) in enumerate(zip(predicted.targets, gold.targets, strict=True)):
        if mine != theirs:
            raise DataError(f"{predicted.source}:{predicted.line + token}: the first column has "
                            f"{mine!r}, but {gold.source}:{gold.line + token} has {theirs!r}")
    for sentence in (gold, predicted):
        if len(sentence.columns) != len(sentence.predicates):
            raise DataError(f"{sentence.source}:{sentence.line}: {len(sentence.predicates)} "
                            f"predicates, but {len(sentence.columns)} argument columns")


def _check_sentences(gold: Sequence[PropsSentence], predicted: Sequence[PropsSentence]) -> None:
    if len(predicted) < len(gold):
        missing = gold[len(predicted)]
        raise DataError(f"{missing.source}:{missing.line}: sentence {len(predicted) + 1} has no "
                        f"predicted counterpart ({len(predicted)} predicted sentences, "
                        f"{len(gold)} gold)")
    if len(predicted) > len(gold):
        extra = predicted[len(gold)]
        raise DataError(f"{extra.source}:{extra.line}: sentence {len(gold) + 1} has no gold "
                        f"counterpart ({len(predicted)} predicted sentences, {len(gold)} gold)")
    for index, (gold_sentence, predicted_sentence) in enumerate(zip(gold, predicted,
                                                                    strict=True)):
        _check_pair(gold_sentence, predicted_sentence, index)


def discriminate(gold: Sequence[Argument], predicted: Sequence[Argument]
                 ) -> tuple[list[Argument], list[Argument], list[Argument]]:
    """(correct, excess, missed) of one proposition: each gold argument matches at most one
    predicted argument with its label and spans."""
    remaining = Counter(gold)
    correct: list[Argument] = []
    excess: list[Argument] = []
    for argument in predicted:
        if remaining[argument] > 0:
            remaining[argument] -= 1
            correct.append(argument)
        else:
            excess.append(argument)
    missed: list[Argument] = []
    for argument in gold:
        if remaining[argument] > 0:
            remaining[argument] -= 1
            missed.append(argument)
    return correct, excess, missed


def figures(correct: int, excess: int, missed: int) -> dict[str, Any]:
    """Counts with precision, recall and F1 in percent, as srl-eval.pl's ``precrecf1``."""
    precision = 100 * correct / (correct + excess) if correct + excess > 0 else 0.0
    recall = 100 * correct / (correct + missed) if correct + missed > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"correct": correct, "excess": excess, "missed": missed,
            "precision": precision, "recall": recall, "f1": f1}


def score_props(gold: Sequence[PropsSentence],
                predicted: Sequence[PropsSentence]) -> dict[str, Any]:
    """srl-eval.pl's figures: ``sentences``, ``propositions``, ``perfect_propositions`` and
    ``perfect_percentage``; ``overall`` (V excluded), ``roles`` (per label, sorted) and
    ``excluded`` (V), each ``figures``. The sentences must align (else a ``DataError``)."""
    _check_sentences(gold, predicted)
    counts: dict[str, list[int]] = {}  # label -> [correct, excess, missed]
    propositions = perfect = 0
    for gold_sentence, predicted_sentence in zip(gold, predicted, strict=True):
        for gold_column, predicted_column in zip(gold_sentence.columns,
                                                 predicted_sentence.columns, strict=True):
            propositions += 1
            outcome = discriminate(merge_continuations(gold_column),
                                   merge_continuations(predicted_column))
            for kind, arguments in enumerate(outcome):
                for argument in arguments:
                    counts.setdefault(argument.label, [0, 0, 0])[kind] += 1
            wrong = [a for a in (*outcome[1], *outcome[2]) if a.label not in EXCLUDED]
            perfect += not wrong
    overall = [sum(values[kind] for label, values in counts.items() if label not in EXCLUDED)
               for kind in range(3)]
    return {
        "sentences": len(gold),
        "propositions": propositions,
        "perfect_propositions": perfect,
        "perfect_percentage": 100 * perfect / propositions if propositions > 0 else 0.0,
        "overall": figures(*overall),
        "roles": {label: figures(*counts[label]) for label in sorted(counts)
                  if label not in EXCLUDED},
        "excluded": {label: figures(*counts[label]) for label in sorted(counts)
                     if label in EXCLUDED},
    }


def score_files(gold_path: str | Path, predicted_path: str | Path) -> dict[str, Any]:
    """``score_props`` of a predicted props file against a gold one."""
    return score_props(read_props(gold_path), read_props(predicted_path))


def _row(label: str, values: dict[str, Any]) -> str:
    return (f"{label:>10}   {values['correct']:6d}  {values['excess']:6d}  "
            f"{values['missed']:6d}   {values['precision']:6.2f}  {values['recall']:6.2f}  "
            f"{values['f1']:6.2f}")


def format_report(result: dict[str, Any]) -> str:
    """The text srl-eval.pl prints (no ``-latex``, no ``-C``) for ``score_props``' result."""
    lines = [
        f"Number of Sentences    :      {result['sentences']:6d}",
        f"Number of Propositions :      {result['propositions']:6d}",
        f"Percentage of perfect props : {result['perfect_percentage']:6.2f}",
        "",
        f"{'':>10}   {'corr.':>6}  {'excess':>6}  {'missed':>6}   {'prec.':>6}  "
        f"{'rec.':>6}  {'F1':>6}",
        RULE,
        _row("Overall", result["overall"]),
        "-" * 10,
        *(_row(label, values) for label, values in result["roles"].items()),
        RULE,
        *(_row(label, values) for label, values in result["excluded"].items()),
        RULE,
    ]
    return "\n".join(lines) + "\n"


# --- the dataset metric ------------------------------------------------------------------------

def _meta(instance: dict[str, Any], key: str) -> Any:
    """A metadata value, whether a field of its own or under ``metadata``."""
    if key in instance:
        return instance[key]
    return instance["metadata"][key]


def _lemma(instance: dict[str, Any], index: int) -> str:
    try:
        lemma = _meta(instance, "lemma")
    except KeyError:
        lemma = None
    text = str(lemma) if lemma not in (None, "", NO_PREDICATE) else str(instance["tokens"][index])
    return "_".join(text.split()) or "_"


def _sentence_pair(sentence_id: Any, members: list[tuple[dict[str, Any], dict[str, Any]]]
                   ) -> tuple[PropsSentence, PropsSentence]:
    members = sorted(members, key=lambda pair: _meta(pair[0], "predicate_number"))
    length = _meta(members[0][0], "sentence_length")
    targets = [NO_PREDICATE] * length
    positions = []
    gold_columns, predicted_columns = [], []
    for instance, record in members:
        where = f"sentence {sentence_id}, predicate {_meta(instance, 'predicate_number')}"
        if _meta(instance, "sentence_length") != length:
            raise ValueError(f"{where}: sentence_length differs between its predicates")
        if len(instance["tags"]) != length or len(record["tags"]) != length:
            raise ValueError(f"{where}: {len(instance['tags'])} gold and {len(record['tags'])} "
                             f"predicted tags for a sentence of {length} tokens")
        index = _meta(instance, "predicate_index")
        if not 0 <= index < length or targets[index] != NO_PREDICATE:
            raise ValueError(f"{where}: predicate_index {index} is out of range or taken")
        targets[index] = _lemma(instance, index)
        positions.append(index)
        gold_columns.append(tuple(bio_to_spans(instance["tags"])))
        predicted_columns.append(tuple(bio_to_spans(record["tags"])))
    if positions != sorted(positions):
        raise ValueError(f"sentence {sentence_id}: predicate_number order {positions} is not "
                         f"the predicates' token order")
    return (PropsSentence(tuple(targets), tuple(gold_columns), f"gold sentence {sentence_id}"),
            PropsSentence(tuple(targets), tuple(predicted_columns),
                          f"predicted sentence {sentence_id}"))


class SrlEval:
    """srl-eval.pl's Overall precision, recall and F1 (percent, V excluded) over an evaluation
    pass: one instance per predicate (``tokens``, gold BIO ``tags``, and ``sentence_id``,
    ``predicate_index``, ``predicate_number``, ``lemma``, ``sentence_length``), one prediction
    each with its BIO ``tags``. ``write`` writes the predicted props file and the gold one at
    ``path + '.gold'``; sentences without a predicate have no instance and are not written."""

    names = ("srl_precision", "srl_recall", "srl_f1")
    primary = "srl_f1"
    unit = "sentence"

    def sentences(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
                  ) -> tuple[list[PropsSentence], list[PropsSentence]]:
        """(gold, predicted) props sentences, ordered by ``sentence_id``."""
        pairs = self._pairs(instances, predictions).values()
        return [gold for gold, _ in pairs], [predicted for _, predicted in pairs]

    def _pairs(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
               ) -> dict[Any, tuple[PropsSentence, PropsSentence]]:
        """``sentence_id`` -> (gold, predicted) props sentence, in ``sentence_id`` order."""
        groups: dict[Any, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for instance, record in zip(instances, predictions, strict=True):
            groups.setdefault(_meta(instance, "sentence_id"), []).append((instance, record))
        return {key: _sentence_pair(key, groups[key]) for key in sorted(groups)}

    def units(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
              ) -> list[Unit]:
        """One unit per sentence (``sentence_id``): its correct, excess and missed arguments,
        V excluded."""
        units = []
        for sentence_id, (gold, predicted) in self._pairs(instances, predictions).items():
            overall = score_props([gold], [predicted])["overall"]
            units.append((f"sentence {sentence_id}",
                          {kind: overall[kind] for kind in ("correct", "excess", "missed")}))
        return units

    def from_state(self, state: State) -> dict[str, float]:
        overall = figures(*(state.get(kind, 0) for kind in ("correct", "excess", "missed")))
        return {"srl_precision": overall["precision"], "srl_recall": overall["recall"],
                "srl_f1": overall["f1"]}

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        return self.from_state(total(self.units(instances, predictions)))

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        gold, predicted = self.sentences(instances, predictions)
        for target, sentences in ((Path(path), predicted), (Path(f"{path}.gold"), gold)):
            text = "".join(format_props(sentence) for sentence in sentences)
            atomic_write(target, lambda tmp, text=text: Path(tmp).write_text(text,
                                                                              encoding="utf-8"))


register("dataset_metric", "srl_eval")(SrlEval)
