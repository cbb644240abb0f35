"""The softmax vocabulary and sentence batches for LM pretraining."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.bilm.characters import MAX_CHARACTERS, token_to_ids
from elmo_experiments.bilm.pretraining.corpus import SEPARATOR, PreparedCorpus
from elmo_experiments.config.registry import AT_LEAST_ONE, Param
from elmo_experiments.data.batching import Batch, make_batches
from elmo_experiments.data.files import read_lines, write_lines

BOS, EOS, UNK = "<S>", "</S>", "<UNK>"
SPECIALS = (BOS, EOS, UNK)
SOFTMAX_FILE, VOCAB_FILE = "softmax.hdf5", "vocab.txt"  # beside an exported biLM's weights
LM_LOADER_PARAMS = (
    Param("batch_size", int, 64, doc="sentences per batch", bounds=AT_LEAST_ONE),
    Param("max_tokens", int, None, bounds=AT_LEAST_ONE),
    Param("batches_per_epoch", int, None, doc="a random subset of this many batches per epoch",
          bounds=AT_LEAST_ONE),
    Param("max_eval_sentences", int, None, doc="evaluate on the first N sentences only",
          bounds=AT_LEAST_ONE),
)


class SoftmaxVocabulary:
    """``<S>``, ``</S>``, ``<UNK>``, then the most frequent words (bilm-tf's vocabulary file)."""

    def __init__(self, words: list[str]) -> None:
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def from_corpus(cls, corpus: PreparedCorpus, size: int, min_count: int = 1
                    ) -> SoftmaxVocabulary:
        order = np.lexsort((np.arange(len(corpus.counts)), -corpus.counts))
        kept = [corpus.types[i] for i in order
                if corpus.counts[i] >= min_count and corpus.types[i] not in SPECIALS]
        return cls([*SPECIALS, *kept[: max(size - len(SPECIALS), 0)]])

    def __len__(self) -> int:
        return len(self.words)

    def save(self, path: str | Path) -> None:
        write_lines(path, self.words)

    @classmethod
    def load(cls, path: str | Path) -> SoftmaxVocabulary:
        return cls(read_lines(path))

    def type_map(self, types: list[str]) -> np.ndarray:
        """Softmax id of every corpus type (UNK for the rest)."""
        unk = self.index[UNK]
        return np.array([self.index.get(t, unk) for t in types], dtype=np.int64)


def sentence_spans(ids: np.ndarray) -> np.ndarray:
    """(start, end) of every sentence in a separator-delimited id array; (sentences, 2)."""
    ends = np.flatnonzero(np.asarray(ids) == SEPARATOR)
    starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else ends
    spans = np.stack([starts, ends], axis=1)
    return spans[spans[:, 1] > spans[:, 0]]


class LmLoader:
    """Batches of whole sentences (stateless LM training), as the trainer's ``Loader``."""

    def __init__(self, corpus: PreparedCorpus, split: str, vocab: SoftmaxVocabulary,
                 settings: dict[str, Any], seed: int = 0, train: bool = True) -> None:
        self.ids = corpus.ids(split)
        self.spans = sentence_spans(self.ids)
        if not train and settings.get("max_eval_sentences"):
            self.spans = self.spans[: settings["max_eval_sentences"]]
        self.settings, self.seed, self.train = settings, seed, train
        self._groups: tuple[int, list[list[int]]] | None = None  # the last epoch's
        self.targets = torch.from_numpy(vocab.type_map(corpus.types))  # (types,)
        self._chars = np.zeros((len(corpus.types), MAX_CHARACTERS), dtype=np.int16)
        for type_id, token in enumerate(corpus.types):
            self._chars[type_id] = token_to_ids(token)

    def groups(self, epoch: int) -> list[list[int]]:
        """The sentence groups of the epoch's batches (the same on every rank)."""
        if self._groups is None or self._groups[0] != epoch:
            lengths = (self.spans[:, 1] - self.spans[:, 0]).tolist()
            groups = make_batches(lengths, self.settings["batch_size"],
                                  self.settings["max_tokens"], shuffle=self.train,
                                  seed=self.seed * 1000 + epoch)
            limit = self.settings.get("batches_per_epoch")
            self._groups = (epoch, groups[:limit] if self.train and limit else groups)
        return self._groups[1]

    def num_batches(self, epoch: int) -> int:
        return len(self.groups(epoch))

    def __len__(self) -> int:
        return self.num_batches(0)

    def batches(self, epoch: int) -> Iterator[Batch]:
        for group in self.groups(epoch):
            yield self.collate(group)

    def collate(self, group: list[int]) -> Batch:
        spans = self.spans[group]
        lengths = spans[:, 1] - spans[:, 0]
        width = int(lengths.max())
        types = np.full((len(group), width), -1, dtype=np.int64)
        for row, (start, end) in enumerate(spans):
            types[row, : end - start] = self.ids[start:end]
        mask = torch.from_numpy(types >= 0)  # (batch, seq)
        safe = torch.from_numpy(np.maximum(types, 0))
        chars = torch.from_numpy(self._chars[safe.numpy()].astype(np.int64))  # (b, s, 50)
        chars[~mask] = 0
        targets = self.targets[safe] * mask  # (batch, seq) softmax ids, 0 at padding
        return Batch({"char_ids": chars, "targets": targets}, {"tokens": mask},
                     int(lengths.sum()), group, [{} for _ in group])
