"""He et al.'s alternating highway LSTM against a per-sequence loop written from its equations."""

from __future__ import annotations

import torch

from elmo_experiments.modules.alternating_lstm import AlternatingLstm, HighwayLstmLayer
from elmo_experiments.modules.highway_lstm_recurrence import HighwayLstmRecurrence


def reference_layer(layer: HighwayLstmLayer, x: torch.Tensor) -> torch.Tensor:
    """One unpadded sequence (seq, input_dim), step by step, no dropout."""
    h = layer.hidden
    w, u, b = layer.input_linearity.weight, layer.state_linearity.weight, layer.state_linearity.bias
    steps = range(len(x)) if layer.go_forward else range(len(x) - 1, -1, -1)
    state, memory, out = torch.zeros(h), torch.zeros(h), [None] * len(x)
    for t in steps:
        pre = [w[k * h:(k + 1) * h] @ x[t] + u[k * h:(k + 1) * h] @ state + b[k * h:(k + 1) * h]
               for k in range(5)]
        i, f, m, o, r = pre
        memory = torch.sigmoid(i) * torch.tanh(m) + torch.sigmoid(f) * memory
        gate = torch.sigmoid(r)
        state = gate * torch.sigmoid(o) * torch.tanh(memory) + (1 - gate) * (w[5 * h:] @ x[t])
        out[t] = state
    return torch.stack(out)


def test_a_padded_batch_equals_each_sequence_run_alone_by_the_equations():
    torch.manual_seed(0)
    encoder = AlternatingLstm(input_dim=3, hidden_size=4, num_layers=3).eval()
    lengths = [5, 2, 4]
    inputs = torch.randn(3, 5, 3)
    mask = torch.arange(5)[None, :] < torch.tensor(lengths)[:, None]
    inputs[~mask] = 7.0  # padding must not leak into real positions
    batched = encoder(inputs, mask)
    for row, n in enumerate(lengths):
        expected = inputs[row, :n]
        for layer in encoder.layers:
            expected = reference_layer(layer, expected)
        torch.testing.assert_close(batched[row, :n], expected, rtol=1e-5, atol=1e-6)
        assert torch.all(batched[row, n:] == 0)
    assert [layer.go_forward for layer in encoder.layers] == [True, False, True]


def test_initialisation_and_recurrent_dropout():
    torch.manual_seed(1)
    layer = HighwayLstmLayer(3, 4, go_forward=True, recurrent_dropout=0.5)
    bias = layer.state_linearity.bias
    assert torch.all(bias[4:8] == 1.0) and torch.all(bias[:4] == 0) and torch.all(bias[8:] == 0)
    block = layer.state_linearity.weight[:4]  # (4, 4): orthogonal
    torch.testing.assert_close(block @ block.T, torch.eye(4), rtol=0, atol=1e-5)
    x, mask = torch.randn(2, 6, 3), torch.ones(2, 6, dtype=torch.bool)
    layer.train()
    assert not torch.equal(layer(x, mask), layer(x, mask))  # a fresh mask per call
    layer.eval()
    assert torch.equal(layer(x, mask), layer(x, mask))
    torch.testing.assert_close(layer(x[:, :1], mask[:, :1]), layer(x, mask)[:, :1])  # causal


def test_gradients_equal_the_per_sequence_loop():
    torch.manual_seed(4)
    encoder = AlternatingLstm(input_dim=3, hidden_size=4, num_layers=2).eval()
    lengths = [5, 3]
    inputs = torch.randn(2, 5, 3)
    mask = torch.arange(5)[None, :] < torch.tensor(lengths)[:, None]
    weights = torch.randn(2, 5, 4)
    ours = torch.autograd.grad((encoder(inputs, mask) * weights).sum(), list(encoder.parameters()))
    total = 0.0
    for row, n in enumerate(lengths):
        out = inputs[row, :n]
        for layer in encoder.layers:
            out = reference_layer(layer, out)
        total = total + (out * weights[row, :n]).sum()
    loop = torch.autograd.grad(total, list(encoder.parameters()))
    for a, b in zip(ours, loop, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_the_recurrence_passes_gradcheck_with_padding_and_recurrent_dropout():
    torch.manual_seed(5)
    steps, batch, h = 4, 3, 2
    valid = torch.tensor([[1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 0, 0]], dtype=torch.float64)
    args = (torch.randn(steps, batch, 5 * h, dtype=torch.float64, requires_grad=True),
            torch.randn(steps, batch, h, dtype=torch.float64, requires_grad=True),
            torch.randn(5 * h, h, dtype=torch.float64, requires_grad=True),
            valid[:, :, None], torch.tensor([[2.0, 0.0]] * batch, dtype=torch.float64),
            [bool(row.all()) for row in valid])
    assert torch.autograd.gradcheck(HighwayLstmRecurrence.apply, args)


def test_the_recurrence_equals_autograds_loop_in_training():
    torch.manual_seed(6)
    layer = HighwayLstmLayer(3, 4, go_forward=False, recurrent_dropout=0.3).train()
    inputs = torch.randn(3, 6, 3)
    mask = torch.arange(6)[None, :] < torch.tensor([6, 2, 4])[:, None]
    weights = torch.randn(3, 6, 4)
    results = []
    for fused in (True, False):
        layer.fused = fused
        torch.manual_seed(7)  # the same recurrent dropout mask
        out = layer(inputs, mask)
        results.append([out, *torch.autograd.grad((out * weights).sum(),
                                                   list(layer.parameters()))])
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_under_bf16_autocast_it_runs_autograds_loop_and_stays_near_fp32():
    torch.manual_seed(8)
    encoder = AlternatingLstm(input_dim=3, hidden_size=4, num_layers=2).train()
    for layer in encoder.layers:
        layer.recurrent_dropout = 0.0
    inputs = torch.randn(2, 5, 3)
    mask = torch.arange(5)[None, :] < torch.tensor([5, 3])[:, None]
    exact = encoder(inputs, mask)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = encoder(inputs, mask)  # bf16 products beside fp32 states
    low.float().sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in encoder.parameters())
    torch.testing.assert_close(low.float(), exact, rtol=0, atol=0.05)
