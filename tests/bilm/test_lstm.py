"""ProjectedLstm: the training (autograd) path equals the in-place inference path."""

from __future__ import annotations

import torch

from elmo_experiments.bilm.lstm import ProjectedLstm


def _layer(clip: float | None) -> ProjectedLstm:
    layer = ProjectedLstm(6, 10, 4, cell_clip=clip, proj_clip=clip)
    layer.reset_parameters(torch.Generator().manual_seed(0))
    with torch.no_grad():
        layer.bias.normal_(generator=torch.Generator().manual_seed(1))
    return layer


def test_autograd_and_inference_paths_agree():
    for clip in (None, 0.3):
        layer = _layer(clip)
        inputs = torch.randn(3, 5, 6, generator=torch.Generator().manual_seed(2)) * 3
        lengths = torch.tensor([5, 2, 4])
        state = (torch.randn(3, 4), torch.randn(3, 10))
        with torch.no_grad():
            fast, (h_fast, c_fast) = layer(inputs, lengths, state)
        slow, (h_slow, c_slow) = layer(inputs, lengths, state)
        torch.testing.assert_close(fast, slow, atol=1e-6, rtol=0)
        torch.testing.assert_close(h_fast, h_slow, atol=1e-6, rtol=0)
        torch.testing.assert_close(c_fast, c_slow, atol=1e-6, rtol=0)
        assert torch.all(fast[1, 2:] == 0) and torch.all(fast[2, 4:] == 0)
        # the final state of a short row is the state after its last token
        _, (h_short, _) = layer(inputs[1:2, :2], lengths[1:2], (state[0][1:2], state[1][1:2]))
        torch.testing.assert_close(h_short[0], h_slow[1], atol=1e-6, rtol=0)
        slow.sum().backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all()
                   for p in layer.parameters())


def test_one_step_by_hand():
    """z = [x, h] W + B with gates [i, j, f, o]; c and h as in ELMO_FORMAT.md."""
    layer = _layer(None)
    x, h0, c0 = torch.randn(1, 1, 6), torch.randn(1, 4), torch.randn(1, 10)
    with torch.no_grad():
        out, (h1, c1) = layer(x, torch.tensor([1]), (h0, c0))
    z = x[0] @ layer.input_weight.t() + h0 @ layer.hidden_weight.t() + layer.bias
    i, j, f, o = z.detach().split(10, dim=1)
    c = torch.sigmoid(f) * c0 + torch.sigmoid(i) * torch.tanh(j)
    h = (torch.sigmoid(o) * torch.tanh(c)) @ layer.projection.detach().t()
    torch.testing.assert_close(c1, c, atol=1e-6, rtol=0)
    torch.testing.assert_close(h1, h, atol=1e-6, rtol=0)
    torch.testing.assert_close(out[0], h, atol=1e-6, rtol=0)
