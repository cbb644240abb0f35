"""SNLI 1.0 JSON lines (``.jsonl`` or ``.jsonl.gz``): premise, hypothesis, gold label."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from elmo_experiments.config.registry import Check, Size, TokenIndexers, register
from elmo_experiments.data.fields import LabelField, MetadataField, TextField
from elmo_experiments.data.files import TOO_DEEP, iter_lines, resolve_data_path
from elmo_experiments.data.languages import DEFAULT_LANGUAGE, language_problem
from elmo_experiments.data.read_report import ReadReport
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.data.tokenizers import unescape_ptb
from elmo_experiments.errors import DataError

LABELS = ("entailment", "contradiction", "neutral")
NO_CONSENSUS = "-"  # annotators did not agree: SNLI's own evaluation drops these pairs


def parse_tokens(binary_parse: str) -> list[str]:
    """The tokens of SNLI's ``sentence*_binary_parse`` (the Stanford parser's tokenisation),
    bracket escapes (``-LRB-``) turned back into brackets."""
    return [unescape_ptb(t) for t in binary_parse.split() if t not in ("(", ")")]


class SnliReader:
    """Premise/hypothesis pairs with one of three labels; pairs labelled ``-`` are dropped.

    ``tokenizer``: ``parse`` takes the tokens of the binary parses shipped with SNLI; ``spacy``
    tokenises the raw sentences as the raw-text pretraining corpus and ``predict`` do.
    """

    def __init__(
        self,
        token_indexers: TokenIndexers,
        tokenizer: Literal["parse", "spacy"] = "parse",
        max_line_length: Size = 200_000,  # longest line read, in bytes (longer: an error)
        language: Annotated[str, Check(language_problem)] = DEFAULT_LANGUAGE,
    ) -> None:
        self.token_indexers: dict[str, TokenIndexer] = {
            key: spec.build() for key, spec in token_indexers.items()}
        self.tokenizer = tokenizer
        self.max_line_length = max_line_length
        self.language = language  # tokenizer spacy's rules, and predict --text's
        self.fields = {"premise": TextField(self.token_indexers),
                       "hypothesis": TextField(self.token_indexers),
                       "label": LabelField(), "pair_id": MetadataField()}
        self.read_report = ReadReport("pairs")

    def _tokens(self, record: dict[str, Any], which: str, where: str) -> list[str]:
        key = f"sentence{which}" + ("" if self.tokenizer == "spacy" else "_binary_parse")
        text = record.get(key)
        if not isinstance(text, str):
            raise DataError(f"{where}: {key!r} is {'missing' if text is None else 'not text'}")
        if self.tokenizer == "spacy":
            from elmo_experiments.data.tokenizers import tokenize

            return tokenize(text, self.language)
        return parse_tokens(text)

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        resolved = resolve_data_path(path)
        instances = []
        report = self.read_report = ReadReport("pairs")
        for number, line in iter_lines(resolved, self.max_line_length,
                                       "dataset_reader.max_line_length"):
            if not line.strip():
                continue
            where = f"{resolved}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"{where}: not a JSON object: {error.msg}") from None
            except RecursionError:
                raise DataError(f"{where}: {TOO_DEEP}") from None
            if not isinstance(record, dict):
                raise DataError(f"{where}: not a JSON object")
            label = record.get("gold_label")
            report.read += 1
            if label == NO_CONSENSUS:
                report.drop("labelled '-' (no consensus)")
                continue
            if label not in LABELS:
                raise DataError(f"{where}: gold_label {label!r} is not one of "
                                f"{', '.join(LABELS)} or '-'")
            premise, hypothesis = self._tokens(record, "1", where), self._tokens(record, "2", where)
            if not premise or not hypothesis:
                raise DataError(f"{where}: empty {'premise' if not premise else 'hypothesis'}")
            instances.append({"premise": premise, "hypothesis": hypothesis, "label": label,
                              "pair_id": record.get("pairID")})
        if not instances:
            found = f" ({report.describe()})" if report.read else ""
            raise DataError(f"{resolved}: no labelled sentence pairs found{found}")
        return instances

    def text_to_instance(self, premise: list[str], hypothesis: list[str],
                         label: str | None = None) -> dict[str, Any]:
        return {"premise": premise, "hypothesis": hypothesis, "label": label}


register("dataset_reader", "snli")(SnliReader)
