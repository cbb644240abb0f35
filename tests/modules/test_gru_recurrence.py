"""The hand-written GRU recurrence against torch.nn.GRU: outputs, every gradient, gradcheck."""

from __future__ import annotations

import torch

from elmo_experiments.modules.encoders import StackedRnn
from elmo_experiments.modules.gru_recurrence import GruRecurrence, run_gru


def _pair(dtype: torch.dtype) -> tuple[torch.nn.GRU, torch.Tensor]:
    torch.manual_seed(0)
    gru = torch.nn.GRU(5, 4, batch_first=True).to(dtype)
    return gru, torch.randn(3, 7, 5, dtype=dtype, requires_grad=True)


def _gradients(gru: torch.nn.GRU, x: torch.Tensor, run) -> list[torch.Tensor]:
    gru.zero_grad()
    x.grad = None
    outputs, last = run(gru, x)
    weights = torch.linspace(-1, 1, outputs.numel(), dtype=x.dtype).view_as(outputs)
    ((outputs * weights).sum() + last.sum() * 0.5).backward()
    return [outputs.detach(), last.detach(), x.grad.clone(),
            *(p.grad.clone() for p in gru.parameters())]


def test_outputs_and_gradients_equal_torch_gru_in_float64():
    gru, x = _pair(torch.float64)
    ours = _gradients(gru, x, run_gru)
    torch_s = _gradients(gru, x, lambda g, i: g(i))
    assert len(ours) == 2 + 1 + 4
    for a, b in zip(ours, torch_s, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_float32_matches_torch_gru_to_rounding():
    gru, x = _pair(torch.float32)
    for a, b in zip(_gradients(gru, x, run_gru), _gradients(gru, x, lambda g, i: g(i)),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_gradcheck_including_the_initial_state():
    torch.manual_seed(1)
    args = (torch.randn(4, 2, 9, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64),
            torch.randn(9, 3, dtype=torch.float64), torch.randn(9, dtype=torch.float64))
    args = tuple(a.requires_grad_() for a in args)
    assert torch.autograd.gradcheck(GruRecurrence.apply, args)


def test_the_gru_encoder_uses_it_and_still_equals_torch_gru_layers():
    torch.manual_seed(2)
    encoder = StackedRnn(5, [4, 3], cell="gru", input_dropout=0.0)
    x, mask = torch.randn(2, 6, 5), torch.tensor([[1] * 6, [1] * 4 + [0] * 2], dtype=torch.bool)
    ours = encoder(x, mask)
    encoder.run = lambda gru, inputs: gru(inputs)  # torch's GRU, as before
    torch.testing.assert_close(ours, encoder(x, mask), rtol=1e-5, atol=1e-6)
    assert ours.shape == (2, 6, 6)
