"""Index instances once (field by field), group them into length-bucketed batches, and let
every field batch its own values into a ``Batch``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from elmo_experiments.config.registry import AT_LEAST_ONE, PROBABILITY, Param
from elmo_experiments.data.fields import Field, MetadataField, text_fields
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError

# Above any instance of the tasks' real data (LitBank's longest document: 3,419 tokens; SQuAD's
# longest passage: under 1,000), far below what a model's memory blows up at (a BiDAF passage
# of 200,000 tokens asks for terabytes)
MAX_INSTANCE_TOKENS = 10_000
DATA_LOADER_PARAMS = (
    Param("batch_size", int, 32, doc="sentences per batch", bounds=AT_LEAST_ONE),
    Param("max_tokens", int, None, doc="cap on padded tokens per batch", bounds=AT_LEAST_ONE),
    Param("shuffle", bool, True),
    Param("sort_by_length", bool, True, doc="bucket sentences of similar length"),
    Param("padding_noise", float, 0.1, doc="relative length noise before bucketing",
          bounds=PROBABILITY),
    Param("validation_batch_size", int, None, bounds=AT_LEAST_ONE),
    Param("max_instance_tokens", int, MAX_INSTANCE_TOKENS, bounds=AT_LEAST_ONE,
          doc="longest text field of an instance, in tokens (a document: all its sentences): a "
              "longer one is an error naming it, before any tensor is made for it"),
)


def mask_key(field: str) -> str:
    """The model argument of a field's mask: ``mask`` for ``tokens``, else ``<field>_mask``."""
    return "mask" if field == "tokens" else f"{field}_mask"


@dataclass
class IndexedInstance:
    """Per field its indexed value (None where the instance has no value); the instance."""

    values: dict[str, Any]
    length: int  # the longest text field: what batches are bucketed by
    num_tokens: int  # all text fields' tokens, for the tokens/s figure
    instance: dict[str, Any]
    # the second-longest text field (0 with one): a pair's batches are bucketed by it too
    shorter: int = 0


@dataclass
class Batch:
    """What a model is fed: per field its tensors, the masks (computed once, when batching),
    the token count, the instances' positions in their dataset and the instances themselves."""

    inputs: dict[str, Any]
    masks: dict[str, torch.Tensor]
    num_tokens: int
    indices: list[int]
    metadata: list[dict[str, Any]]
    # this batch's share of the global batch it is a part of, times the number of processes
    # (1.0 in one process): a multi-process run weights each rank's loss by it
    weight: float = 1.0

    def __len__(self) -> int:
        return len(self.metadata)

    def to(self, device: torch.device) -> Batch:
        """The same batch with every tensor on ``device``."""
        return Batch(_to_device(self.inputs, device), _to_device(self.masks, device),
                     self.num_tokens, self.indices, self.metadata, self.weight)

    def arguments(self) -> dict[str, Any]:
        """The model's keyword arguments: each field by name, each mask by ``mask_key``, and
        ``metadata``."""
        return {**self.inputs, **{mask_key(name): mask for name, mask in self.masks.items()},
                "metadata": self.metadata}


def _to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device, non_blocking=True)
    if isinstance(value, dict):
        return {key: _to_device(item, device) for key, item in value.items()}
    return value


def index_instances(instances: list[dict[str, Any]], fields: dict[str, Field], vocab: Vocabulary,
                    source: str = "data", max_instance_tokens: int | None = MAX_INSTANCE_TOKENS
                    ) -> list[IndexedInstance]:
    """Index every instance field by field; a problem (a label the vocabulary lacks, a per-token
    field of the wrong length, a span outside its text, a text field over
    ``max_instance_tokens`` tokens) is an error naming ``source``."""
    texts = text_fields(fields)
    for name, field in fields.items():
        if field.aligned_with is not None and field.aligned_with not in texts:
            raise DataError(f"{source}: field {name!r} follows {field.aligned_with!r}, which "
                            f"is not a text field of this reader ({', '.join(texts)})")
    out = []
    for number, instance in enumerate(instances, start=1):
        values: dict[str, Any] = {}
        for name, field in fields.items():
            value = instance.get(name)
            if value is None:
                if not field.target and not isinstance(field, MetadataField):
                    raise DataError(f"{source}: instance {number}: no {name!r}")
                values[name] = None
                continue
            try:
                values[name] = field.index(value, vocab, instance)
            except DataError as error:
                raise DataError(f"{source}: instance {number}: {name}: {error}") from None
        sizes = [fields[name].size(values[name]) for name in texts]
        for name, size in zip(texts, sizes, strict=True):
            if max_instance_tokens is not None and size > max_instance_tokens:
                raise DataError(f"{source}: instance {number}: {name}: {size:,} tokens, over "
                                f"data_loader.max_instance_tokens ({max_instance_tokens:,}); "
                                f"raise it to read such instances, or have the reader cut them")
        ordered = sorted(sizes, reverse=True)
        out.append(IndexedInstance(values, ordered[0] if ordered else 0, sum(sizes), instance,
                                   ordered[1] if len(ordered) > 1 else 0))
    return out


def make_batches(
    lengths: list[int],
    batch_size: int,
    max_tokens: int | None = None,
    shuffle: bool = True,
    sort_by_length: bool = True,
    padding_noise: float = 0.1,
    seed: int = 0,
    then_by: list[int] | None = None,
) -> list[list[int]]:
    """Group indices into batches of similar length; deterministic for a given ``seed``.

    ``then_by``: a second length per index (a pair's shorter text). Where any is non-zero, the
    (noisy) lengths are rounded to whole tokens and each run of one rounded length is sorted by
    it, so that both texts of a batch are of similar lengths."""
    rng = np.random.default_rng(seed)
    order = np.arange(len(lengths))
    if shuffle:
        order = rng.permutation(len(lengths))
    if sort_by_length:
        noisy = np.array(lengths, dtype=np.float64)[order]
        if shuffle and padding_noise > 0:
            noisy = noisy * (1.0 + rng.uniform(-padding_noise, padding_noise, len(order)))
        if then_by is not None and any(then_by):
            order = order[np.lexsort((np.array(then_by)[order], np.round(noisy)))]
        else:
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


def collate(items: list[IndexedInstance], fields: dict[str, Field]) -> Batch:
    """Each field batches its own values; a target field only when every item has one."""
    inputs: dict[str, Any] = {}
    masks: dict[str, torch.Tensor] = {}
    for name, field in fields.items():
        values = [item.values[name] for item in items]
        if any(value is None for value in values):
            continue
        padded = field.batch(values)
        if padded is None:
            continue
        inputs[name] = padded.value
        if padded.mask is not None:
            masks[name] = padded.mask
    return Batch(inputs, masks, sum(item.num_tokens for item in items), [],
                 [item.instance for item in items])


def batch_groups(lengths: list[int], settings: dict[str, Any], seed: int, train: bool,
                 then_by: list[int] | None = None) -> list[list[int]]:
    """The index groups of one pass; evaluation passes are unshuffled and may use a larger
    batch. The same ``seed`` gives the same groups (every rank of a multi-process run)."""
    batch_size = settings["batch_size"]
    if not train and settings.get("validation_batch_size"):
        batch_size = settings["validation_batch_size"]
    return make_batches(
        lengths,
        batch_size,
        settings.get("max_tokens"),
        shuffle=train and settings.get("shuffle", True),
        sort_by_length=settings.get("sort_by_length", True),
        padding_noise=settings.get("padding_noise", 0.1),
        seed=seed,
        then_by=then_by,
    )


def iterate_batches(
    data: list[IndexedInstance],
    fields: dict[str, Field],
    settings: dict[str, Any],
    seed: int,
    train: bool,
) -> Iterator[Batch]:
    """Batches for one pass (see ``batch_groups``)."""
    for group in batch_groups([item.length for item in data], settings, seed, train,
                              [item.shorter for item in data]):
        batch = collate([data[i] for i in group], fields)
        batch.indices = group
        yield batch


class InstanceLoader:
    """What the trainer iterates: batches of indexed instances, reshuffled every epoch.

    ``groups(epoch)`` are the index groups the epoch's batches hold, and ``num_batches(epoch)``
    their exact count (under ``max_tokens`` the count changes from epoch to epoch, as the
    shuffled, noisy lengths bucket differently)."""

    def __init__(self, data: list[IndexedInstance], fields: dict[str, Field],
                 settings: dict[str, Any], seed: int = 0, train: bool = True) -> None:
        self.data, self.fields, self.settings = data, fields, settings
        self.seed, self.train = seed, train
        self._groups: tuple[int, list[list[int]]] | None = None  # the last epoch's groups

    def groups(self, epoch: int) -> list[list[int]]:
        if self._groups is None or self._groups[0] != epoch:
            seed = self.seed * 1000 + epoch if self.train else 0
            self._groups = (epoch, batch_groups([item.length for item in self.data],
                                                self.settings, seed, self.train,
                                                [item.shorter for item in self.data]))
        return self._groups[1]

    def collate(self, group: list[int]) -> Batch:
        batch = collate([self.data[i] for i in group], self.fields)
        batch.indices = list(group)
        return batch

    def batches(self, epoch: int) -> Iterator[Batch]:
        for group in self.groups(epoch):
            yield self.collate(group)

    def num_batches(self, epoch: int) -> int:
        return len(self.groups(epoch))

    def __len__(self) -> int:
        return self.num_batches(0)

    def instances(self) -> list[dict[str, Any]]:
        """The instances, in input order (what a dataset-level metric scores)."""
        return [item.instance for item in self.data]
