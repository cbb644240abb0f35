"""Stanford Sentiment Treebank: one PTB-style tree per line, a label 0-4 on every node."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elmo_experiments.config.registry import Size, TokenIndexers, register
from elmo_experiments.data.fields import LabelField, TextField
from elmo_experiments.data.files import iter_lines, resolve_data_path
from elmo_experiments.data.read_report import ReadReport
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.data.tokenizers import unescape_ptb
from elmo_experiments.errors import DataError

FINE_LABELS = ("0", "1", "2", "3", "4")  # very negative .. very positive
BINARY = {"0": "negative", "1": "negative", "3": "positive", "4": "positive"}  # 2 is dropped


@dataclass
class Phrase:
    """A node of a sentiment tree: its label and the tokens it spans."""

    label: str
    tokens: list[str]


def parse_tree(text: str) -> list[Phrase]:
    """Every phrase of ``(label (label word) ...)``, the root first; ValueError if malformed."""
    phrases: list[Phrase] = []
    # one stack entry per open node: (its index in phrases, token count when it opened)
    stack: list[tuple[int, int]] = []
    tokens: list[str] = []
    position, end = 0, len(text)
    while position < end:
        char = text[position]
        if char.isspace():
            position += 1
        elif char == "(":
            label_end = position + 1
            while label_end < end and not text[label_end].isspace() and text[label_end] not in "()":
                label_end += 1
            label = text[position + 1 : label_end]
            if label not in FINE_LABELS:
                raise ValueError(f"node label {label!r} at column {position + 1} is not 0-4")
            stack.append((len(phrases), len(tokens)))
            phrases.append(Phrase(label, []))
            position = label_end
        elif char == ")":
            if not stack:
                raise ValueError(f"unbalanced ')' at column {position + 1}")
            index, start = stack.pop()
            if len(tokens) == start:
                raise ValueError(f"empty node at column {position + 1}")
            phrases[index].tokens = tokens[start:]
            position += 1
            if not stack and text[position:].strip():
                raise ValueError(f"text after the tree's end at column {position + 1}")
        else:
            if not stack:
                raise ValueError(f"word outside a node at column {position + 1}")
            word_end = position
            while word_end < end and not text[word_end].isspace() and text[word_end] not in "()":
                word_end += 1
            tokens.append(unescape_ptb(text[position:word_end]))
            position = word_end
    if stack or not phrases:
        raise ValueError("unbalanced '(': the tree is not closed" if stack else "no tree")
    return phrases


class SstReader:
    """SST-5 (or SST-2 with ``binary``): the root sentence, or every phrase of the tree.

    ``use_subtrees`` adds every phrase of at least ``min_phrase_length`` tokens (the root is
    always kept); evaluation reads the roots only, through ``validation_dataset_reader``.
    """

    def __init__(
        self,
        token_indexers: TokenIndexers,
        use_subtrees: bool = False,  # every phrase, not only the root sentence
        min_phrase_length: Size = 1,  # shortest phrase kept with use_subtrees
        binary: bool = False,  # SST-2: drop neutral, 0/1 -> negative, 3/4 -> positive
        max_line_length: Size = 50_000,  # longest line read, in bytes (longer: an error)
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()}
        self.use_subtrees = use_subtrees
        self.min_phrase_length = min_phrase_length
        self.binary = binary
        self.max_line_length = max_line_length
        self.fields = {"tokens": TextField(self.token_indexers), "label": LabelField()}
        self.read_report = ReadReport("phrases")

    def _label(self, label: str) -> str | None:
        return BINARY.get(label) if self.binary else label

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        resolved = resolve_data_path(path)
        instances = []
        report = self.read_report = ReadReport("phrases")
        for number, line in iter_lines(resolved, self.max_line_length,
                                       "dataset_reader.max_line_length"):
            if not line.strip():
                continue
            try:
                phrases = parse_tree(line)
            except ValueError as error:
                raise DataError(f"{resolved}:{number}: malformed sentiment tree: {error}") from None
            kept = phrases[:1]
            if self.use_subtrees:
                kept += [p for p in phrases[1:] if len(p.tokens) >= self.min_phrase_length]
            report.read += len(kept)
            for phrase in kept:
                label = self._label(phrase.label)
                if label is None:
                    report.drop("neutral (label 2, left out by binary)")
                    continue
                instances.append({"tokens": phrase.tokens, "label": label})
        if not instances:
            found = f" ({report.describe()})" if report.read else ""
            raise DataError(f"{resolved}: no sentiment trees found{found}")
        return instances

    def text_to_instance(self, tokens: list[str], label: str | None = None) -> dict[str, Any]:
        return {"tokens": tokens, "label": label}


register("dataset_reader", "sst")(SstReader)
