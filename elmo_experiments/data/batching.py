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
from elmo_experiments.errors import DataError

DATA_LOADER_PARAMS = (
    Param("batch_size", int, 32, doc="sentences per batch"),
    Param("max_tokens", int, None, doc="cap on padded tokens per batch"),
    Param("shuffle", bool, True),
    Param("sort_by_length", bool, True, doc="bucket sentences of similar length"),
    Param("padding_noise", float, 0.1, doc="relative length noise before bucketing"),
    Param("validation_batch_size", int, None),
)


@dataclass(frozen=True)
class Fields:
    """What a reader's instances hold: token-list fields and one label field.

    ``label_kind`` is ``sequence`` (one label per token of the first text field, as in tagging)
    or ``single`` (one label per instance, as in classification and entailment).
    """

    text: tuple[str, ...] = ("tokens",)
    label: str = "tags"
    label_kind: str = "sequence"

    def labels_of(self, instance: dict[str, Any]) -> list[str] | None:
        """The instance's labels as a list (one item for ``single``), or None if unlabelled."""
        value = instance.get(self.label)
        if value is None:
            return None
        return list(value) if self.label_kind == "sequence" else [value]


TAGGING = Fields()


def mask_key(field: str) -> str:
    """The batch key of a text field's mask: ``mask`` for ``tokens``, else ``<field>_mask``."""
    return "mask" if field == "tokens" else f"{field}_mask"


@dataclass
class IndexedInstance:
    """Per text field: features per indexer key and its length; label ids; the instance."""

    features: dict[str, dict[str, np.ndarray]]
    lengths: dict[str, int]
    labels: np.ndarray | None
    instance: dict[str, Any]

    @property
    def length(self) -> int:
        """The longest text field: what batches are bucketed by."""
        return max(self.lengths.values())


def index_instances(
    instances: list[dict[str, Any]],
    indexers: dict[str, TokenIndexer],
    vocab: Vocabulary,
    fields: Fields = TAGGING,
    label_namespace: str = "labels",
    source: str = "data",
) -> list[IndexedInstance]:
    """Index every instance; a label the vocabulary lacks is an error naming ``source``."""
    out = []
    for number, instance in enumerate(instances, start=1):
        features = {field: {key: indexer.index(instance[field], vocab)
                            for key, indexer in indexers.items()} for field in fields.text}
        lengths = {field: len(instance[field]) for field in fields.text}
        names = fields.labels_of(instance)
        labels = None
        if names is not None:
            try:
                labels = np.array([vocab.index(label_namespace, t) for t in names],
                                  dtype=np.int64)
            except DataError as error:
                raise DataError(f"{source}: instance {number}: {error} (the model knows only "
                                f"the training data's labels)") from None
        out.append(IndexedInstance(features, lengths, labels, instance))
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


def collate(items: list[IndexedInstance], indexers: dict[str, TokenIndexer],
            fields: Fields = TAGGING) -> dict[str, Any]:
    """Pad a batch: per text field its tensors per indexer key and its mask (batch, seq); the
    labels if every item has them; ``num_tokens`` (all text fields) for the progress bar."""
    batch: dict[str, Any] = {"metadata": [item.instance for item in items]}
    num_tokens = 0
    for field in fields.text:
        sizes = [item.lengths[field] for item in items]
        length = max(sizes)
        lengths = torch.tensor(sizes)
        batch[field] = {key: ix.pad([it.features[field][key] for it in items], length)
                        for key, ix in indexers.items()}
        batch[mask_key(field)] = torch.arange(length)[None, :] < lengths[:, None]  # (batch, seq)
        num_tokens += sum(sizes)
    batch["num_tokens"] = num_tokens
    if all(item.labels is not None for item in items):
        if fields.label_kind == "single":
            labels = np.array([int(item.labels[0]) for item in items], dtype=np.int64)  # (batch,)
        else:
            first = fields.text[0]
            labels = np.zeros((len(items), max(it.lengths[first] for it in items)), dtype=np.int64)
            for row, item in enumerate(items):
                labels[row, : item.lengths[first]] = item.labels  # (batch, seq)
        batch[fields.label] = torch.from_numpy(labels)
    return batch


def iterate_batches(
    data: list[IndexedInstance],
    indexers: dict[str, TokenIndexer],
    settings: dict[str, Any],
    seed: int,
    train: bool,
    fields: Fields = TAGGING,
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
        batch = collate([data[i] for i in group], indexers, fields)
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
                 settings: dict[str, Any], seed: int = 0, train: bool = True,
                 fields: Fields = TAGGING) -> None:
        self.data, self.indexers, self.settings = data, indexers, settings
        self.seed, self.train, self.fields = seed, train, fields

    def batches(self, epoch: int) -> Iterator[dict[str, Any]]:
        seed = self.seed * 1000 + epoch if self.train else 0
        return iterate_batches(self.data, self.indexers, self.settings, seed, self.train,
                               self.fields)

    def __len__(self) -> int:
        return num_batches(self.data, self.settings, self.train)
