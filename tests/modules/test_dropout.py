"""The task models' Dropout: torch's contract (inverted scaling, identity in evaluation, the
gradient through the same mask) with its faster CPU mask."""

from __future__ import annotations

import torch

from elmo_experiments.modules.dropout import Dropout, VariationalDropout, keep_mask


def test_the_mask_keeps_the_share_asked_for_and_scales_the_kept():
    torch.manual_seed(0)
    mask = keep_mask(torch.zeros(()), (200_000,), 0.3)
    kept = mask != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.005  # binomial sd ~0.001
    torch.testing.assert_close(mask[kept], torch.full_like(mask[kept], 1 / 0.7))


def test_dropout_is_torch_dropout_with_the_gradient_through_its_mask():
    torch.manual_seed(1)
    layer = Dropout(0.5)
    assert isinstance(layer, torch.nn.Dropout) and layer.state_dict() == {}
    x = torch.randn(64, 33, requires_grad=True)
    y = layer(x)
    y.backward(torch.ones_like(y))
    mask = y.detach() / x.detach()
    assert set(mask.unique().tolist()) <= {0.0, 2.0}
    torch.testing.assert_close(x.grad, mask)
    assert torch.equal(layer.eval()(x), x)
    assert torch.equal(Dropout(0.0).train()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))


def test_variational_dropout_shares_one_mask_over_time():
    torch.manual_seed(2)
    x = torch.ones(3, 7, 5)
    y = VariationalDropout(0.5).train()(x)
    assert torch.equal(y, y[:, :1].expand_as(y)) and set(y.unique().tolist()) <= {0.0, 2.0}
