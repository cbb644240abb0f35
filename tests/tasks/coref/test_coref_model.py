"""The coreference model's antecedent scorer, computed block by block (``_pair_scores``), is the
scorer applied to the concatenated pair representation [g_i; g_j; g_i * g_j; features], written
out here the plain way, in its values and its parameters' gradients."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from elmo_experiments.testing import assemble


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> torch.nn.Module:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_SIZE", "cpu")
    _, _, built, _ = assemble("coref_baseline")
    return built.eval()  # no dropout: both forms see the same function


def _concatenated(model: torch.nn.Module, top: torch.Tensor, antecedents: torch.Tensor,
                  features: torch.Tensor) -> torch.Tensor:
    batch, k, a = antecedents.shape
    others = torch.stack([top[row, antecedents[row].reshape(-1)] for row in range(batch)])
    others = others.reshape(batch, k, a, -1)  # (batch, k, a, g)
    own = top[:, :, None].expand_as(others)
    return model.antecedent_scorer(torch.cat([own, others, own * others, features], -1))[..., 0]


def test_blockwise_pair_scores_equal_the_concatenated_scorer(model: torch.nn.Module) -> None:
    torch.manual_seed(1)
    first = model.antecedent_scorer[0].layers[0]
    feature_size = model.distance_embedding.embedding_dim
    g = (first.in_features - 3 * feature_size) // 3
    batch, k, a = 2, 7, 4
    top = torch.randn(batch, k, g, dtype=torch.float64)
    antecedents = torch.randint(0, k, (batch, k, a))
    features = torch.randn(batch, k, a, 3 * feature_size, dtype=torch.float64)
    model = model.double()

    def scores_and_grads(fn: Callable[..., torch.Tensor]
                         ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad()
        scores = fn(top, antecedents, features)  # (batch, k, a)
        (scores * torch.linspace(-1, 1, scores.numel()).reshape(scores.shape)).sum().backward()
        return scores.detach(), [p.grad.clone() for p in model.antecedent_scorer.parameters()]

    got, got_grads = scores_and_grads(model._pair_scores)
    want, want_grads = scores_and_grads(lambda *args: _concatenated(model, *args))
    assert got.shape == (batch, k, a)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    for mine, theirs in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-10, atol=1e-10)


def test_projected_span_representations_equal_the_layer_over_g() -> None:
    from elmo_experiments.modules.spans import (
        projected_span_representations,
        span_representations,
    )

    torch.manual_seed(2)
    batch, tokens, e, d, f, width, h = 2, 9, 5, 4, 3, 4, 6
    encoded = torch.randn(batch, tokens, e, dtype=torch.float64, requires_grad=True)
    embedded = torch.randn(batch, tokens, d, dtype=torch.float64, requires_grad=True)
    spans = torch.tensor([[[0, 0], [0, 3], [2, 4], [8, 8]],
                          [[1, 2], [3, 6], [5, 5], [6, 7]]])  # (batch, n, 2), widths 1-4
    head_scorer = torch.nn.Linear(e, 1).double()
    width_embedding = torch.nn.Embedding(width, f).double()
    linear = torch.nn.Linear(2 * e + d + f, h).double()
    modules = [head_scorer, width_embedding, linear]
    inputs = [encoded, embedded]

    def values_and_grads(fn: Callable[[], torch.Tensor]
                         ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        for module in modules:
            module.zero_grad()
        for tensor in inputs:
            tensor.grad = None
        out = fn()  # (batch, n, h)
        (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
        grads = [p.grad for m in modules for p in m.parameters() if p.grad is not None]
        return out.detach(), [g.clone() for g in grads + [t.grad for t in inputs]]

    got, got_grads = values_and_grads(lambda: projected_span_representations(
        encoded, embedded, spans, head_scorer, width_embedding, linear))
    want, want_grads = values_and_grads(lambda: linear(span_representations(
        encoded, embedded, spans, head_scorer, width_embedding)))
    assert got.shape == (batch, 4, h)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    assert len(got_grads) == len(want_grads) == 7
    for mine, theirs in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-10, atol=1e-10)
