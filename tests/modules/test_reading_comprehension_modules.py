"""Best-span decoding against brute force; BiDAF's similarity against its definition."""

from __future__ import annotations

import itertools

import pytest
import torch

from elmo_experiments.modules.attention import TriLinearSimilarity
from elmo_experiments.modules.highway import Highway
from elmo_experiments.modules.span_decoding import best_spans


def brute_force(start: list[float], end: list[float], length: int,
                max_length: int | None) -> tuple[tuple[int, int], float]:
    """Every (i, j) with i <= j < length in order; the first best wins."""
    best, where = float("-inf"), (0, 0)
    for i, j in itertools.product(range(length), repeat=2):
        allowed = i <= j and (max_length is None or j - i < max_length)
        if allowed and start[i] + end[j] > best:
            best, where = start[i] + end[j], (i, j)
    return where, best


@pytest.mark.parametrize("max_length", [None, 1, 3, 17])
def test_best_spans_equal_brute_force(max_length):
    generator = torch.Generator().manual_seed(max_length or 0)
    batch, seq = 40, 9
    # integer logits make ties common: they must resolve as the brute force does
    start = torch.randint(-3, 4, (batch, seq), generator=generator).float()
    end = torch.randint(-3, 4, (batch, seq), generator=generator).float()
    lengths = torch.randint(1, seq + 1, (batch,), generator=generator)
    mask = torch.arange(seq)[None, :] < lengths[:, None]
    start[~mask] = 100.0  # padding must never win, however high its scores
    end[~mask] = 100.0
    spans, scores = best_spans(start, end, mask, max_length)
    for row in range(batch):
        n = int(lengths[row])
        where, best = brute_force(start[row].tolist(), end[row].tolist(), n, max_length)
        assert tuple(spans[row].tolist()) == where and scores[row].item() == best, row
        i, j = spans[row].tolist()
        assert 0 <= i <= j < n


def test_the_best_span_may_need_a_later_start_than_the_best_start():
    # the best start (0) is too far from every good end under max_length = 2
    start = torch.tensor([[5.0, 0.0, 1.0, 0.0]])
    end = torch.tensor([[-9.0, -9.0, 0.0, 4.0]])
    spans, scores = best_spans(start, end, torch.ones(1, 4, dtype=torch.bool), 2)
    assert spans.tolist() == [[2, 3]] and scores.item() == 5.0


def test_trilinear_similarity_is_w_dot_a_b_and_their_product():
    torch.manual_seed(0)
    similarity = TriLinearSimilarity(4)
    with torch.no_grad():
        similarity.bias.fill_(0.25)
    a, b = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    weight = torch.cat([similarity.weight_a, similarity.weight_b, similarity.weight_ab])
    expected = torch.empty(2, 3, 5)
    for n, i, j in itertools.product(range(2), range(3), range(5)):
        joined = torch.cat([a[n, i], b[n, j], a[n, i] * b[n, j]])
        expected[n, i, j] = joined @ weight + 0.25
    torch.testing.assert_close(similarity(a, b), expected, rtol=1e-5, atol=1e-6)


def test_highway_is_a_gated_mix_of_input_and_relu_transform():
    torch.manual_seed(1)
    highway = Highway(3, layers=2)
    x = torch.randn(4, 3)
    expected = x
    for layer in highway.layers:
        transform = expected @ layer.weight[:3].T + layer.bias[:3]
        gate = torch.sigmoid(expected @ layer.weight[3:].T + layer.bias[3:])
        expected = gate * expected + (1 - gate) * torch.relu(transform)
    torch.testing.assert_close(highway(x), expected)
    assert torch.equal(Highway(3, layers=0)(x), x)
