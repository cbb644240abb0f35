"""One evaluation pass: the loss, the model's streamed metrics, and optionally the predictions
in input order and a dataset-level metric computed from them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import torch

from elmo_experiments.contracts import human_readable, objective
from elmo_experiments.data.batching import Batch
from elmo_experiments.metrics.metric import DatasetMetric, compute_all
from elmo_experiments.precision import autocast
from elmo_experiments.training.distributed import SINGLE, World, merge_metric_states


class Loader(Protocol):
    """Batches for one epoch (deterministic for a given epoch) and how many there are."""

    def batches(self, epoch: int) -> Iterator[Batch]: ...

    def num_batches(self, epoch: int) -> int: ...

    def __len__(self) -> int: ...


@torch.no_grad()
def evaluate(
    model: torch.nn.Module,
    loader: Loader,
    predictions: list[dict[str, Any]] | None = None,
    amp: str | None = None,
    dataset_metric: DatasetMetric | None = None,
    world: World = SINGLE,
) -> dict[str, float]:
    """Loss and metrics over ``loader``; fills ``predictions`` (input order) when given a list.

    ``dataset_metric`` scores the loader's instances against all the pass's predictions
    (``loader`` must then hold instances: an ``InstanceLoader``). ``amp``: the training's
    mixed precision (``bf16``), or None for fp32. In a multi-process run (``world``) each
    rank evaluates its share of every batch (``loader`` is then a ``ShardedLoader``), and the
    losses, metric states and predictions of all ranks are combined on every rank.
    """
    model.eval()
    compute_all(model.metrics, reset=True)
    total_loss, batches = 0.0, 0.0
    ordered: dict[int, dict[str, Any]] = {}
    collect = predictions is not None or dataset_metric is not None
    device = next(model.parameters()).device
    for batch in loader.batches(0):
        with autocast(amp, device.type):
            output = model(**batch.to(device).arguments())
            # the model's loss plus its penalty, as training counts it
            loss = objective(model, output) if "loss" in output else None
        if loss is not None:  # a batch's share of its global batch's loss (all of it alone)
            share = batch.weight / world.size
            total_loss += loss.item() * share
            batches += share
        if collect:
            for index, record in zip(batch.indices, human_readable(model, output, batch),
                                     strict=True):
                ordered[index] = record
    total_loss, batches = world.sum([total_loss, batches])
    merge_metric_states(model.metrics, world)
    if collect and world.distributed:
        ordered = {index: record for part in world.gather(ordered)
                   for index, record in part.items()}
    if collect and sorted(ordered) != list(range(len(ordered))):
        raise ValueError("evaluate() collects predictions only from a loader that yields every "
                         "instance once")
    records = [ordered[i] for i in range(len(ordered))]
    if predictions is not None:
        predictions.extend(records)
    metrics = compute_all(model.metrics, reset=True)
    if batches:
        metrics = {"loss": total_loss / batches, **metrics}
    if dataset_metric is not None:
        metrics.update(dataset_metric.compute(loader.instances(), records))  # type: ignore[attr-defined]
    return metrics
