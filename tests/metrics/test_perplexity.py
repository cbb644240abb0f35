"""Perplexity from summed NLLs: a diverged model's huge (finite) NLL gives inf, not an
OverflowError."""

from __future__ import annotations

import math

import pytest

from elmo_experiments.metrics.perplexity import Perplexity


def test_perplexity_is_exp_of_the_mean_nll() -> None:
    metric = Perplexity()
    assert metric.compute() == {}
    metric.update(2 * math.log(10.0), 2 * math.log(30.0), 2)
    assert metric.compute() == pytest.approx(
        {"perplexity_forward": 10.0, "perplexity_backward": 30.0, "perplexity": 20.0})


def test_a_mean_nll_beyond_a_float_exponent_is_inf() -> None:
    metric = Perplexity()
    metric.update(3e6, 5.0, 3)  # forward: 1e6 nats a token (lr=1e6); exp(1e6) overflows
    assert metric.compute() == {"perplexity_forward": math.inf,
                                "perplexity_backward": pytest.approx(math.exp(5 / 3)),
                                "perplexity": math.inf}
