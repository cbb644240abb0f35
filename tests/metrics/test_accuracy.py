"""Categorical accuracy against hand-counted examples."""

from __future__ import annotations

import torch

from elmo_experiments.metrics.accuracy import CategoricalAccuracy


def test_accuracy_accumulates_and_resets() -> None:
    metric = CategoricalAccuracy()
    metric.update(torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), torch.tensor([1, 1, 1]))
    assert metric.compute() == {"accuracy": 100.0 * 2 / 3}
    metric.update(torch.tensor([[2.0, 1.0]]), torch.tensor([0]))
    assert metric.compute()["accuracy"] == 75.0
    metric.reset()
    assert metric.compute()["accuracy"] == 0.0


def test_ties_go_to_the_lowest_id() -> None:
    metric = CategoricalAccuracy()
    metric.update(torch.tensor([[0.5, 0.5, 0.1]]), torch.tensor([0]))
    assert metric.compute()["accuracy"] == 100.0


def test_replicas_merge_to_the_whole() -> None:
    logits = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [2.0, 1.0], [0.0, 1.0]])
    gold = torch.tensor([1, 1, 1, 0, 0])
    whole, first, second = CategoricalAccuracy(), CategoricalAccuracy(), CategoricalAccuracy()
    whole.update(logits, gold)
    first.update(logits[:2], gold[:2])
    second.update(logits[2:], gold[2:])
    first.merge(second.state())
    assert first.compute() == whole.compute() == {"accuracy": 60.0}
