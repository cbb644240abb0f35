"""Chunk (span) precision/recall/F1 reproducing conlleval.pl (CoNLL-2000/2003, 2004-01-26).

The counting is conlleval's streaming state machine, token by token, with its
``startOfChunk``/``endOfChunk`` rules and its ``inCorrect`` flag: a chunk is correct only
when the gold and guessed chunks start at the same token with the same type and end at
the same token. Every sentence is followed by a boundary, like a blank line in a
conlleval input file. Default options: no ``-r``, outside tag ``O``.

One documented extension: conlleval.pl 2004 knows ``E`` only in the IOE sense and has no
``S``, so it merges ``E-X B-X`` and ``S-X S-X`` into single chunks. Here ``E``/``S`` (and
their aliases ``L``/``U``) follow the IOBES reading: ``E``/``S`` always end a chunk, and
``S``, or ``B`` after ``E``/``S``, always starts one. Sequences without ``S`` and without
``E`` directly followed by ``B`` (so all IOB1, BIO and IOE input) count exactly as in perl.
"""

from __future__ import annotations

import copy
import gzip
import os
from dataclasses import asdict, dataclass, field

from elmo_experiments.errors import DataError
from elmo_experiments.metrics.metric import State, add_states

BOUNDARY = "-X-"  # conlleval's sentence-boundary word
DOCSTART = "-DOCSTART-"
_ALIASES = {"L": "E", "U": "S"}
_IOBES = frozenset("BIOES")
# (previous prefix, current prefix) pairs; the second set of each is the IOBES extension.
_STRICT_END = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
_END_PAIRS = _STRICT_END | {("E", "B"), ("E", "S"), ("B", "S"), ("I", "S")}
_END_PAIRS |= {("S", t) for t in _IOBES}
_STRICT_START = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}
_START_PAIRS = _STRICT_START | {("E", "B"), ("S", "B"), ("S", "I"), ("S", "E")}
_START_PAIRS |= {(p, "S") for p in _IOBES}

Tag = tuple[str, str]  # (prefix, type)
_OUTSIDE: Tag = ("O", "")


def split_tag(tag: str, iobes: bool = True) -> Tag:
    """Split at the first ``-`` as conlleval does; type ``0`` becomes ``''`` (perl falsiness).
    With ``iobes`` the BIOUL prefixes ``L``/``U`` read as ``E``/``S``; without it they stay
    prefixes conlleval has no rule for (only a change of type ends or starts a chunk there)."""
    prefix, sep, chunk_type = tag.partition("-")
    if not sep:
        prefix, chunk_type = tag, ""
    if iobes:
        prefix = _ALIASES.get(prefix, prefix)
    return prefix, ("" if chunk_type == "0" else chunk_type)


def end_of_chunk(
    prev_tag: str, tag: str, prev_type: str, chunk_type: str, iobes: bool = True
) -> bool:
    """conlleval's ``endOfChunk``: did a chunk end between the previous and current word?"""
    if prev_tag in ("[", "]") or (prev_tag, tag) in (_END_PAIRS if iobes else _STRICT_END):
        return True
    return prev_tag not in ("O", ".") and prev_type != chunk_type


def start_of_chunk(
    prev_tag: str, tag: str, prev_type: str, chunk_type: str, iobes: bool = True
) -> bool:
    """conlleval's ``startOfChunk``: did a chunk start between the previous and current word?"""
    if tag in ("[", "]") or (prev_tag, tag) in (_START_PAIRS if iobes else _STRICT_START):
        return True
    return tag not in ("O", ".") and prev_type != chunk_type


def extract_chunks(tags: list[str]) -> list[tuple[str, int, int]]:
    """Chunks ``(type, first, last)`` of one sentence under conlleval's start/end rules."""
    chunks: list[tuple[str, int, int]] = []
    (prev, prev_type), open_start, open_type = _OUTSIDE, None, ""
    for i, (cur, cur_type) in enumerate([*map(split_tag, tags), _OUTSIDE]):
        starts = start_of_chunk(prev, cur, prev_type, cur_type)
        if open_start is not None and (starts or end_of_chunk(prev, cur, prev_type, cur_type)):
            chunks.append((open_type, open_start, i - 1))
            open_start = None
        if starts and i < len(tags):
            open_start, open_type = i, cur_type
        prev, prev_type = cur, cur_type
    if open_start is not None:
        chunks.append((open_type, open_start, len(tags) - 1))
    return chunks


@dataclass
class ChunkCounts:
    """conlleval's totals: tokens, correct tags, and gold/found/correct phrases (all, by type)."""

    tokens: int = 0
    correct_tags: int = 0
    gold_phrases: int = 0
    found_phrases: int = 0
    correct_phrases: int = 0
    gold_by_type: dict[str, int] = field(default_factory=dict)
    found_by_type: dict[str, int] = field(default_factory=dict)
    correct_by_type: dict[str, int] = field(default_factory=dict)

    def types(self) -> list[str]:
        """Chunk types seen in gold or found phrases, sorted (as conlleval's report orders them)."""
        return sorted(set(self.gold_by_type) | set(self.found_by_type))


def _prf(correct: int, found: int, gold: int) -> tuple[float, float, float]:
    precision = 100 * correct / found if found > 0 else 0.0
    recall = 100 * correct / gold if gold > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


class SpanF1:
    """Streaming conlleval-exact chunk metric: ``update`` per batch, ``compute`` any time.

    ``iobes=False`` drops the IOBES extension: every input then counts exactly as conlleval.pl.
    Every update ends at a sentence boundary, where (for typed chunk tags: ``B-PER``, not a bare
    ``B``) the stream holds no open chunk, so the state is the counts alone and replicas' (or
    sentences') counts add up.
    """

    names = ("precision", "recall", "f1", "accuracy")

    def __init__(self, iobes: bool = True) -> None:
        self.iobes = iobes
        self.reset()

    def reset(self) -> None:
        """Forget everything, as if starting a new conlleval input."""
        self._counts = ChunkCounts()
        self._last_gold: Tag = _OUTSIDE
        self._last_guess: Tag = _OUTSIDE
        self._in_correct = False

    def update(self, gold: list[list[str]], predicted: list[list[str]]) -> None:
        """Add sentences of gold and predicted tag strings (each sentence ends at a boundary)."""
        if len(gold) != len(predicted):
            raise ValueError(f"got {len(gold)} gold sentences but {len(predicted)} predicted")
        for index, (gold_tags, guess_tags) in enumerate(zip(gold, predicted, strict=True)):
            if len(gold_tags) != len(guess_tags):
                raise ValueError(
                    f"sentence {index}: {len(gold_tags)} gold tags but {len(guess_tags)} predicted"
                )
        for gold_tags, guess_tags in zip(gold, predicted, strict=True):
            for gold_tag, guess_tag in zip(gold_tags, guess_tags, strict=True):
                self._step(split_tag(gold_tag, self.iobes), split_tag(guess_tag, self.iobes),
                           boundary=False)
            self._step(_OUTSIDE, _OUTSIDE, boundary=True)

    def _step(self, gold: Tag, guess: Tag, boundary: bool) -> None:
        """One input line of conlleval's main loop."""
        counts = self._counts
        (correct, correct_type), (guessed, guessed_type) = gold, guess
        (last_correct, last_correct_type) = self._last_gold
        (last_guessed, last_guessed_type) = self._last_guess
        iobes = self.iobes
        gold_ends = end_of_chunk(last_correct, correct, last_correct_type, correct_type, iobes)
        guess_ends = end_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type, iobes)
        gold_starts = start_of_chunk(last_correct, correct, last_correct_type, correct_type, iobes)
        guess_starts = start_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type, iobes)
        if self._in_correct:
            if gold_ends and guess_ends and last_guessed_type == last_correct_type:
                self._in_correct = False
                _add_phrase(counts, "correct", last_correct_type)
            elif gold_ends != guess_ends or guessed_type != correct_type:
                self._in_correct = False
        if gold_starts and guess_starts and guessed_type == correct_type:
            self._in_correct = True
        if gold_starts:
            _add_phrase(counts, "gold", correct_type)
        if guess_starts:
            _add_phrase(counts, "found", guessed_type)
        if not boundary:
            counts.correct_tags += int(correct == guessed and correct_type == guessed_type)
            counts.tokens += 1
        self._last_gold, self._last_guess = gold, guess

    def counts(self) -> ChunkCounts:
        """Totals as conlleval reports them at end of input (a still-open correct chunk counts)."""
        counts = copy.deepcopy(self._counts)
        if self._in_correct:
            _add_phrase(counts, "correct", self._last_gold[1])
        return counts

    def state(self) -> State:
        return asdict(self.counts())

    def merge(self, state: State) -> None:
        self._counts = ChunkCounts(**add_states(asdict(self.counts()), state))
        self._in_correct = False

    def compute(self) -> dict[str, float]:
        """Percent ``precision``/``recall``/``f1``/``accuracy`` plus ``precision-TYPE`` etc."""
        counts = self.counts()
        precision, recall, f1 = _prf(
            counts.correct_phrases, counts.found_phrases, counts.gold_phrases
        )
        accuracy = 100 * counts.correct_tags / counts.tokens if counts.tokens else 0.0
        metrics = {"precision": precision, "recall": recall, "f1": f1, "accuracy": accuracy}
        for chunk_type in counts.types():
            p, r, f = _type_prf(counts, chunk_type)
            metrics[f"precision-{chunk_type}"] = p
            metrics[f"recall-{chunk_type}"] = r
            metrics[f"f1-{chunk_type}"] = f
        return metrics


def _add_phrase(counts: ChunkCounts, kind: str, chunk_type: str) -> None:
    setattr(counts, f"{kind}_phrases", getattr(counts, f"{kind}_phrases") + 1)
    by_type: dict[str, int] = getattr(counts, f"{kind}_by_type")
    by_type[chunk_type] = by_type.get(chunk_type, 0) + 1


def _type_prf(counts: ChunkCounts, chunk_type: str) -> tuple[float, float, float]:
    return _prf(
        counts.correct_by_type.get(chunk_type, 0),
        counts.found_by_type.get(chunk_type, 0),
        counts.gold_by_type.get(chunk_type, 0),
    )


def format_report(counts: ChunkCounts) -> str:
    """The exact text conlleval.pl (2004-01-26, no ``-l``) prints for these counts."""
    precision, recall, f1 = _prf(counts.correct_phrases, counts.found_phrases, counts.gold_phrases)
    lines = [
        f"processed {counts.tokens} tokens with {counts.gold_phrases} phrases; "
        f"found: {counts.found_phrases} phrases; correct: {counts.correct_phrases}."
    ]
    if counts.tokens > 0:
        accuracy = 100 * counts.correct_tags / counts.tokens
        lines.append(
            f"accuracy: {accuracy:6.2f}%; precision: {precision:6.2f}%; "
            f"recall: {recall:6.2f}%; FB1: {f1:6.2f}"
        )
    # perl: sort(keys %foundCorrect, keys %foundGuessed) de-duplicated with
    # `not($lastType) or $lastType ne $i`, so an empty type listed twice prints twice.
    last: str | None = None
    for chunk_type in sorted([*counts.gold_by_type, *counts.found_by_type]):
        if last in (None, "", "0") or last != chunk_type:
            p, r, f = _type_prf(counts, chunk_type)
            found = counts.found_by_type.get(chunk_type, 0)
            lines.append(
                f"{chunk_type:>17}: precision: {p:6.2f}%; recall: {r:6.2f}%; "
                f"FB1: {f:6.2f}  {found:d}"
            )
        last = chunk_type
    return "\n".join(lines) + "\n"


def read_conlleval_file(
    path: str | os.PathLike[str], *, keep_docstart: bool = False
) -> tuple[list[list[str]], list[list[str]]]:
    """Read conlleval input (``.gz`` too): gold and predicted tags per sentence.

    Fields are whitespace-separated; the last is the predicted tag, the one before it the
    gold tag. Blank lines and lines whose first field is ``-X-`` end sentences. A line whose
    first field is ``-DOCSTART-`` is a boundary too, unless ``keep_docstart``: conlleval.pl
    itself treats it as an ordinary token (counted, normally ``O O``), which
    ``keep_docstart=True`` reproduces. Raises :class:`DataError` naming file and line for a
    line with fewer than 2 fields or a different field count from the first line.
    """
    name = os.fspath(path)
    opener = gzip.open if name.endswith(".gz") else open
    gold_sentences: list[list[str]] = []
    guess_sentences: list[list[str]] = []
    gold: list[str] = []
    guess: list[str] = []
    expected: int | None = None

    def flush() -> None:
        nonlocal gold, guess
        if gold:
            gold_sentences.append(gold)
            guess_sentences.append(guess)
        gold, guess = [], []

    with opener(name, "rt", encoding="utf-8", errors="replace") as handle:
        for line_number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                flush()
                continue
            if expected is None:
                expected = len(fields)
            elif len(fields) != expected:
                raise DataError(
                    f"{name}:{line_number}: unexpected number of fields {len(fields)} "
                    f"(the first line has {expected})"
                )
            if fields[0] == BOUNDARY or (fields[0] == DOCSTART and not keep_docstart):
                flush()
                continue
            if len(fields) < 2:
                raise DataError(
                    f"{name}:{line_number}: need at least 2 fields (gold tag, predicted tag), "
                    f"found {len(fields)}"
                )
            gold.append(fields[-2])
            guess.append(fields[-1])
    flush()
    return gold_sentences, guess_sentences


def conlleval_report(path: str | os.PathLike[str], iobes: bool = False) -> str:
    """What ``conlleval.pl < path`` prints (``iobes=True``: read E/S tags as IOBES)."""
    if not os.path.isfile(path):
        raise DataError(f"{os.fspath(path)}: no such file")
    gold, guess = read_conlleval_file(path, keep_docstart=True)
    metric = SpanF1(iobes=iobes)
    metric.update(gold, guess)
    return format_report(metric.counts())
