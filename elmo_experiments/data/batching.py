"""Index instances once, group them into length-bucketed batches, and collate into tensors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from elmo_experiments.config.registry import Param
from elmo_experiments.data.token_indexers import TokenIndexer
from elmo_experiments.data.vocabulary import Vocabulary

DATA_LOADER_PARAMS = (
    Param("batch_size", int, 32, doc="sentences per batch"),
    Param("max_tokens", int, None, doc="cap on padded tokens per batch"),
    Param("shuffle", bool, True),
    Param("sort_by_length", bool, True, doc="bucket sentences of similar length"),
    Param("padding_noise", float, 0.1, doc="relative length noise before bucketing"),
    Param("validation_batch_size", int, None),
)


@dataclass
class IndexedInstance:
    """A sentence's features per indexer key, its label ids, and the original instance."""

    features: dict[str, np.ndarray]
    labels: np.ndarray | None
    length: int
    instance: dict[str, Any]


def index_instances(
    instances: list[dict[str, Any]],
    indexers: dict[str, TokenIndexer],
    vocab: Vocabulary,
    label_namespace: str = "labels",
) -> list[IndexedInstance]:
    out = []
    for instance in instances:
        tokens = instance["tokens"]
        features = {key: indexer.index(tokens, vocab) for key, indexer in indexers.items()}
        tags = instance.get("tags")
        labels = None
        if tags is not None:
            labels = np.array([vocab.index(label_namespace, t) for t in tags], dtype=np.int64)
        out.append(IndexedInstance(features, labels, len(tokens), instance))
    return out


def make_batches(
    lengths: list[int],
    batch_size: int,
    max_tokens: int | None = None,
    shuffle: bool = True,
    sort_by_length: bool = True,
    padding_noise: float = 0.1,
    seed: int = 0,
) -> list[list[int]]:
    """Group indices into batches of similar length; deterministic for a given ``seed``."""
    rng = np.random.default_rng(seed)
    order = np.arange(len(lengths))
    if shuffle:
        order = rng.permutation(len(lengths))
    if sort_by_length:
        noisy = np.array(lengths, dtype=np.float64)[order]
        if shuffle and padding_noise > 0:
            noisy = noisy * (1.0 + rng.uniform(-padding_noise, padding_noise, len(order)))
        order = order[np.argsort(noisy, kind="stable")]
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order.tolist():
        new_longest = max(longest, lengths[index])
        too_many = len(current) >= batch_size
        too_long = max_tokens is not None and new_longest * (len(current) + 1) > max_tokens
        if current and (too_many or too_long):
            batches.append(current)
            current, new_longest = [], lengths[index]
        current.append(index)
        longest = new_longest
    if current:
        batches.append(current)
    if shuffle:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def collate(items: list[IndexedInstance], indexers: dict[str, TokenIndexer]) -> dict[str, Any]:
    """Pad a batch: ``tokens`` per indexer key, ``mask`` (batch, seq) and ``tags`` if labelled."""
    length = max(item.length for item in items)
    lengths = torch.tensor([item.length for item in items])
    mask = torch.arange(length)[None, :] < lengths[:, None]  # (batch, seq)
    batch: dict[str, Any] = {
        "tokens": {key: ix.pad([it.features[key] for it in items], length)
                   for key, ix in indexers.items()},
        "mask": mask,
        "metadata": [item.instance for item in items],
    }
    if all(item.labels is not None for item in items):
        tags = np.zeros((len(items), length), dtype=np.int64)
        for row, item in enumerate(items):
            tags[row, : item.length] = item.labels
        batch["tags"] = torch.from_numpy(tags)  # (batch, seq)
    return batch


def iterate_batches(
    data: list[IndexedInstance],
    indexers: dict[str, TokenIndexer],
    settings: dict[str, Any],
    seed: int,
    train: bool,
) -> Iterator[dict[str, Any]]:
    """Batches for one pass; evaluation passes are unshuffled and may use a larger batch."""
    batch_size = settings["batch_size"]
    if not train and settings.get("validation_batch_size"):
        batch_size = settings["validation_batch_size"]
    groups = make_batches(
        [item.length for item in data],
        batch_size,
        settings.get("max_tokens"),
        shuffle=train and settings.get("shuffle", True),
        sort_by_length=settings.get("sort_by_length", True),
        padding_noise=settings.get("padding_noise", 0.1),
        seed=seed,
    )
    for group in groups:
        batch = collate([data[i] for i in group], indexers)
        batch["indices"] = group
        yield batch


def num_batches(data: list[IndexedInstance], settings: dict[str, Any], train: bool) -> int:
    batch_size = settings["batch_size"]
    if not train and settings.get("validation_batch_size"):
        batch_size = settings["validation_batch_size"]
    groups = make_batches([item.length for item in data], batch_size, settings.get("max_tokens"),
                          shuffle=False, sort_by_length=settings.get("sort_by_length", True))
    return len(groups)


class InstanceLoader:
    """What the trainer iterates: batches of indexed instances, reshuffled every epoch."""

    def __init__(self, data: list[IndexedInstance], indexers: dict[str, TokenIndexer],
                 settings: dict[str, Any], seed: int = 0, train: bool = True) -> None:
        self.data, self.indexers, self.settings = data, indexers, settings
        self.seed, self.train = seed, train

    def batches(self, epoch: int) -> Iterator[dict[str, Any]]:
        seed = self.seed * 1000 + epoch if self.train else 0
        return iterate_batches(self.data, self.indexers, self.settings, seed, self.train)

    def __len__(self) -> int:
        return num_batches(self.data, self.settings, self.train)
