"""Typed fields: each kind of instance value owns its vocabulary counting, indexing and batching.

A reader declares its instances' fields by name (``{"tokens": TextField(indexers), "tags":
SequenceLabelField("tokens")}``); ``batching.py`` indexes instances field by field and lets every
field pad its own values. Kinds: text, list of text (a document's sentences), sequence label,
label, span (token indices, not through the vocabulary), per-token feature tensor, metadata.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError

Counts = dict[str, Counter[str]]


@dataclass
class Padded:
    """A field's batched value and, for fields with a ragged axis, its mask."""

    value: Any
    mask: torch.Tensor | None = None


class Field(Protocol):
    """``target`` fields are gold annotations: dropped for prediction, and batched only when
    every instance of the batch has one. ``aligned_with`` names the text field whose tokens a
    per-token field follows (its length is checked when indexing)."""

    target: bool
    aligned_with: str | None

    def count(self, value: Any, counts: Counts) -> None: ...

    def index(self, value: Any, vocab: Vocabulary, instance: dict[str, Any]) -> Any: ...

    def size(self, indexed: Any) -> int: ...

    def batch(self, items: list[Any]) -> Padded | None: ...


def lengths_mask(lengths: list[int], width: int) -> torch.Tensor:
    """(items, width) booleans: True for the first ``lengths[i]`` positions of row i."""
    return torch.arange(width)[None, :] < torch.tensor(lengths, dtype=torch.long)[:, None]


class TextField:
    """Tokens, indexed by every one of the reader's indexers; batched as (batch, seq[, ...])
    per indexer key, with a (batch, seq) mask."""

    target = False
    aligned_with = None

    def __init__(self, indexers: dict[str, TokenIndexer]) -> None:
        self.indexers = indexers

    def count(self, value: list[str], counts: Counts) -> None:
        for indexer in self.indexers.values():
            indexer.count(value, counts)

    def index(self, value: list[str], vocab: Vocabulary, instance: dict[str, Any]
              ) -> dict[str, np.ndarray]:
        if not isinstance(value, list):
            raise DataError(f"expected a list of tokens, found {type(value).__name__}")
        return {key: indexer.index(value, vocab) for key, indexer in self.indexers.items()}

    def size(self, indexed: dict[str, np.ndarray]) -> int:
        return len(next(iter(indexed.values())))

    def batch(self, items: list[dict[str, np.ndarray]]) -> Padded:
        sizes = [self.size(item) for item in items]
        width = max(sizes)
        value = {key: indexer.pad([item[key] for item in items], width)
                 for key, indexer in self.indexers.items()}
        return Padded(value, lengths_mask(sizes, width))  # mask: (batch, seq)


class ListTextField:
    """A document: a list of sentences, each a list of tokens. Batched as (batch, sentences,
    tokens[, ...]) per indexer key, with a (batch, sentences, tokens) mask; missing sentences
    are all padding."""

    target = False
    aligned_with = None

    def __init__(self, indexers: dict[str, TokenIndexer]) -> None:
        self.text = TextField(indexers)

    def count(self, value: list[list[str]], counts: Counts) -> None:
        for sentence in value:
            self.text.count(sentence, counts)

    def index(self, value: list[list[str]], vocab: Vocabulary, instance: dict[str, Any]
              ) -> list[dict[str, np.ndarray]]:
        if not isinstance(value, list) or not value:
            raise DataError("expected a non-empty list of sentences")
        return [self.text.index(sentence, vocab, instance) for sentence in value]

    def size(self, indexed: list[dict[str, np.ndarray]]) -> int:
        return sum(self.text.size(sentence) for sentence in indexed)

    def batch(self, items: list[list[dict[str, np.ndarray]]]) -> Padded:
        sentences = max(len(item) for item in items)
        empty = {key: array[:0] for key, array in items[0][0].items()}  # a padding sentence
        flat = [item[i] if i < len(item) else empty for item in items for i in range(sentences)]
        padded = self.text.batch(flat)  # (batch * sentences, tokens, ...)
        shape = (len(items), sentences)
        value = {key: tensor.reshape(*shape, *tensor.shape[1:])
                 for key, tensor in padded.value.items()}
        return Padded(value, padded.mask.reshape(*shape, -1))  # mask: (batch, sents, tokens)


class LabelField:
    """One label per instance from a vocabulary namespace; batched as (batch,) ids."""

    target = True
    aligned_with = None

    def __init__(self, namespace: str = "labels") -> None:
        self.namespace = namespace

    def count(self, value: str, counts: Counts) -> None:
        counts.setdefault(self.namespace, Counter())[value] += 1

    def index(self, value: str, vocab: Vocabulary, instance: dict[str, Any]) -> int:
        return _label_id(vocab, self.namespace, value)

    def size(self, indexed: int) -> int:
        return 0

    def batch(self, items: list[int]) -> Padded:
        return Padded(torch.tensor(items, dtype=torch.long))  # (batch,)


class SequenceLabelField:
    """One label per token of the text field ``aligned_with``; batched as (batch, seq) ids,
    0 at padding (the text field's mask tells padding apart)."""

    target = True

    def __init__(self, aligned_with: str = "tokens", namespace: str = "labels") -> None:
        self.aligned_with = aligned_with
        self.namespace = namespace

    def count(self, value: list[str], counts: Counts) -> None:
        counts.setdefault(self.namespace, Counter()).update(value)

    def index(self, value: list[str], vocab: Vocabulary, instance: dict[str, Any]) -> np.ndarray:
        _check_aligned(len(value), instance, self.aligned_with)
        return np.array([_label_id(vocab, self.namespace, label) for label in value],
                        dtype=np.int64)

    def size(self, indexed: np.ndarray) -> int:
        return 0

    def batch(self, items: list[np.ndarray]) -> Padded:
        return Padded(torch.from_numpy(_pad_rows(items, 0, np.int64)))  # (batch, seq)


class TensorField:
    """Per-token features of the text field ``aligned_with`` that no indexer sees (e.g. SRL's
    predicate indicator): one number or one vector per token. Batched as (batch, seq[, dim]),
    ``padding_value`` at padding."""

    target = False

    def __init__(self, aligned_with: str = "tokens", dtype: str = "float",
                 padding_value: float = 0.0) -> None:
        if dtype not in ("float", "long"):
            raise ValueError(f"TensorField dtype must be 'float' or 'long', not {dtype!r}")
        self.aligned_with = aligned_with
        self.dtype = np.float32 if dtype == "float" else np.int64
        self.padding_value = padding_value

    def count(self, value: Any, counts: Counts) -> None:
        return None

    def index(self, value: Any, vocab: Vocabulary, instance: dict[str, Any]) -> np.ndarray:
        try:
            array = np.asarray(value, dtype=self.dtype)
        except (TypeError, ValueError):
            raise DataError("expected one number or one vector (all of one size) per "
                            "token") from None
        if array.ndim not in (1, 2):
            raise DataError(f"expected one number or one vector per token, found shape "
                            f"{tuple(array.shape)}")
        _check_aligned(len(array), instance, self.aligned_with)
        return array

    def size(self, indexed: np.ndarray) -> int:
        return 0

    def batch(self, items: list[np.ndarray]) -> Padded:
        trailing = {item.shape[1:] for item in items if len(item)}
        if len(trailing) > 1:
            raise DataError(f"per-token features of different shapes in one batch: "
                            f"{sorted(trailing)}")
        shape = trailing.pop() if trailing else ()
        items = [item.reshape(0, *shape) if not len(item) else item for item in items]
        return Padded(torch.from_numpy(_pad_rows(items, self.padding_value, self.dtype)))


class SpanField:
    """Inclusive token spans ``(start, end)`` into the text field ``aligned_with``, not through
    the vocabulary: one span (batched as (batch, 2)), or with ``many`` a list of spans
    (batched as (batch, spans, 2), -1 at padding, with a (batch, spans) mask)."""

    def __init__(self, aligned_with: str = "tokens", many: bool = False,
                 target: bool = False) -> None:
        self.aligned_with = aligned_with
        self.many = many
        self.target = target

    def count(self, value: Any, counts: Counts) -> None:
        return None

    def index(self, value: Any, vocab: Vocabulary, instance: dict[str, Any]) -> np.ndarray:
        rows = value if self.many else [value]
        if not isinstance(rows, list | tuple) or not all(
                isinstance(row, list | tuple) and len(row) == 2 and
                all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in row)
                for row in rows):
            wanted = "a list of [start, end] pairs" if self.many else "a [start, end] pair"
            raise DataError(f"expected {wanted} of integer token indices, found {value!r}")
        spans = np.array(rows, dtype=np.int64).reshape(-1, 2)
        length = _length(instance[self.aligned_with])
        for start, end in spans.tolist():
            if not 0 <= start <= end < length:
                raise DataError(f"span ({start}, {end}) is not inside the {length} tokens of "
                                f"{self.aligned_with!r}")
        return spans if self.many else spans[0]

    def size(self, indexed: np.ndarray) -> int:
        return 0

    def batch(self, items: list[np.ndarray]) -> Padded:
        if not self.many:
            return Padded(torch.from_numpy(np.stack(items)))  # (batch, 2)
        counts = [len(item) for item in items]
        width = max(counts)
        out = np.full((len(items), width, 2), -1, dtype=np.int64)
        for row, item in enumerate(items):
            out[row, : len(item)] = item
        return Padded(torch.from_numpy(out), lengths_mask(counts, width))  # (batch, spans, 2)


class MetadataField:
    """Anything the model does not read as a tensor (ids, raw text, offsets); it reaches the
    model and ``human_readable`` through the batch's metadata, never indexed or padded."""

    target = False
    aligned_with = None

    def count(self, value: Any, counts: Counts) -> None:
        return None

    def index(self, value: Any, vocab: Vocabulary, instance: dict[str, Any]) -> Any:
        return None

    def size(self, indexed: Any) -> int:
        return 0

    def batch(self, items: list[Any]) -> None:
        return None


def _label_id(vocab: Vocabulary, namespace: str, label: str) -> int:
    try:
        return vocab.index(namespace, label)
    except DataError as error:
        raise DataError(f"{error} (the model knows only the training data's labels)") from None


def _length(value: Any) -> int:
    """Tokens of a text value; a document's tokens are counted across its sentences."""
    if value and isinstance(value[0], list):
        return sum(len(sentence) for sentence in value)
    return len(value)


def _check_aligned(items: int, instance: dict[str, Any], aligned_with: str) -> None:
    tokens = _length(instance[aligned_with])
    if items != tokens:
        raise DataError(f"{items} values for the {tokens} tokens of {aligned_with!r}")


def _pad_rows(items: list[np.ndarray], padding: float, dtype: Any) -> np.ndarray:
    """Stack (length[, dim]) rows into (items, longest[, dim]), ``padding`` after each row."""
    width = max(len(item) for item in items)
    out = np.full((len(items), width, *items[0].shape[1:]), padding, dtype=dtype)
    for row, item in enumerate(items):
        out[row, : len(item)] = item
    return out


def text_fields(fields: dict[str, Field]) -> list[str]:
    """The names of the fields that hold tokens (what ``--text`` input and the token count use)."""
    return [name for name, field in fields.items() if isinstance(field, TextField | ListTextField)]


def target_fields(fields: dict[str, Field]) -> list[str]:
    return [name for name, field in fields.items() if field.target]
