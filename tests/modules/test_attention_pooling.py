"""Masked softmax, soft alignment, pooling and the feed-forward, against brute force."""

from __future__ import annotations

import math

import pytest
import torch

from elmo_experiments.modules.attention import align, masked_softmax
from elmo_experiments.modules.feedforward import FeedForward
from elmo_experiments.modules.pooling import (
    SelfAttentivePooling,
    masked_max,
    masked_mean,
    masked_min,
)

LENGTHS = [3, 1, 4]


def batch(seed: int = 0, dim: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    inputs = torch.randn(len(LENGTHS), max(LENGTHS), dim)
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]
    return inputs, mask


def test_masked_softmax_matches_a_softmax_over_the_valid_entries() -> None:
    logits, mask = batch()
    weights = masked_softmax(logits[:, :, 0], mask)
    for row, n in enumerate(LENGTHS):
        values = logits[row, :n, 0].tolist()
        total = sum(math.exp(v) for v in values)
        expected = [math.exp(v) / total for v in values] + [0.0] * (max(LENGTHS) - n)
        assert weights[row].tolist() == pytest.approx(expected, abs=1e-6)


def test_a_fully_masked_row_gives_zeros() -> None:
    weights = masked_softmax(torch.randn(2, 3), torch.tensor([[True, False, True],
                                                              [False, False, False]]))
    assert weights[1].tolist() == [0.0, 0.0, 0.0]
    assert float(weights[0].sum()) == pytest.approx(1.0)


def test_align_is_the_weighted_sum_of_valid_keys() -> None:
    queries, _ = batch(1)
    keys, key_mask = batch(2)
    aligned = align(queries, keys, key_mask)  # (batch, q, dim)
    for b, n in enumerate(LENGTHS):
        for q in range(queries.shape[1]):
            scores = [float(queries[b, q] @ keys[b, k]) for k in range(n)]
            top = max(scores)
            weights = [math.exp(s - top) for s in scores]
            expected = sum(w * keys[b, k] for k, w in enumerate(weights)) / sum(weights)
            assert torch.allclose(aligned[b, q], expected, atol=1e-5)


def test_pools_ignore_padding() -> None:
    inputs, mask = batch()
    inputs = inputs.masked_fill(~mask[:, :, None], 1e6)  # padding would win every max
    for row, n in enumerate(LENGTHS):
        valid = inputs[row, :n]
        assert torch.equal(masked_max(inputs, mask)[row], valid.max(dim=0).values)
        assert torch.equal(masked_min(inputs, mask)[row], valid.min(dim=0).values)
        assert torch.allclose(masked_mean(inputs, mask)[row], valid.mean(dim=0), atol=1e-6)


def test_self_attentive_pooling_weights_valid_positions() -> None:
    inputs, mask = batch()
    pool = SelfAttentivePooling(inputs.shape[2])
    pooled = pool(inputs, mask)
    for row, n in enumerate(LENGTHS):
        scores = pool.scorer(inputs[row, :n]).squeeze(-1)
        expected = (torch.softmax(scores, 0)[:, None] * inputs[row, :n]).sum(0)
        assert torch.allclose(pooled[row], expected, atol=1e-6)
    changed = inputs.clone()
    changed[~mask] = 99.0
    assert torch.allclose(pool(changed, mask), pooled, atol=1e-6)


def test_feedforward_layers_and_errors() -> None:
    torch.manual_seed(0)
    layer = FeedForward(4, [3, 2], ["relu", "linear"], [0.0, 0.0])
    x = torch.randn(5, 4)
    first, second = layer.layers[0], layer.layers[3]
    assert torch.allclose(layer(x), second(torch.relu(first(x))))
    assert layer.output_dim == 2
    with pytest.raises(ValueError, match="2 layers but 1 activations"):
        FeedForward(4, [3, 2], ["relu"])
    with pytest.raises(ValueError, match="unknown activation 'gelu2'"):
        FeedForward(4, [3], "gelu2")
