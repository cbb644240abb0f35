"""A one-layer GRU (torch.nn.GRU's equations and parameters) with a hand-written backward pass.

PyTorch's GRU has no oneDNN kernel on the CPU: it runs each time step as a small product and
about ten element-wise operations, each an autograd node replayed one by one in the backward
pass. Here the input products of all steps are one product (autograd's), the forward pass runs
one product and five element-wise operations a step and keeps only the gate activations, and
the backward pass runs the recurrence in reverse with one product a step, leaving the recurrent
weight's gradient to one large product over all steps. Gates are torch's [r, z, n]:

    r = sigmoid(x W_ir + b_ir + h W_hr + b_hr);  z = sigmoid(x W_iz + b_iz + h W_hz + b_hz)
    n = tanh(x W_in + b_in + r * (h W_hn + b_hn));  h' = (1 - z) * n + z * h

``tests/modules/test_gru_recurrence.py`` checks outputs and gradients against torch.nn.GRU.
"""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.precision import run_lstm


class GruRecurrence(torch.autograd.Function):
    """outputs = recurrence(gates_x, h0, weight_hh, bias_hh); gates_x (steps, batch, 3H) is
    ``x W_ih + b_ih`` for every step, h0 (batch, H); outputs (steps, batch, H)."""

    @staticmethod
    def forward(ctx: Any, gates_x: torch.Tensor, h0: torch.Tensor, weight_hh: torch.Tensor,
                bias_hh: torch.Tensor) -> torch.Tensor:
        steps, batch, three_h = gates_x.shape
        size = three_h // 3
        hiddens = gates_x.new_empty(steps + 1, batch, size)  # h_{t-1}, t = 0..steps
        rz = gates_x.new_empty(steps, batch, 2 * size)  # sigmoid activations [r, z]
        n = gates_x.new_empty(steps, batch, size)  # tanh activations
        gh_n = gates_x.new_empty(steps, batch, size)  # h W_hn + b_hn, before r
        hiddens[0] = h0
        weight_t = weight_hh.t()  # (H, 3H)
        for t in range(steps):
            h = hiddens[t]
            gh = torch.addmm(bias_hh, h, weight_t)  # (batch, 3H)
            torch.add(gates_x[t, :, : 2 * size], gh[:, : 2 * size], out=rz[t]).sigmoid_()
            r, z = rz[t].split(size, dim=1)
            gh_n[t] = gh[:, 2 * size :]
            torch.addcmul(gates_x[t, :, 2 * size :], r, gh_n[t], out=n[t]).tanh_()
            torch.addcmul(n[t], z, h - n[t], out=hiddens[t + 1])  # (1 - z) n + z h
        ctx.save_for_backward(hiddens, rz, n, gh_n, weight_hh)
        return hiddens[1:]

    @staticmethod
    def backward(ctx: Any, grad_outputs: torch.Tensor) -> tuple[Any, ...]:
        hiddens, rz, n, gh_n, weight_hh = ctx.saved_tensors
        steps, batch, size = n.shape
        grad_gates_x = n.new_empty(steps, batch, 3 * size)  # d loss / d (x W_ih + b_ih)
        grad_gates_h = n.new_empty(steps, batch, 3 * size)  # d loss / d (h W_hh + b_hh)
        dh = torch.zeros_like(hiddens[0])  # (batch, H): from the later steps
        for t in reversed(range(steps)):
            dh.add_(grad_outputs[t])  # d h_t
            r, z = rz[t].split(size, dim=1)
            h, n_t = hiddens[t], n[t]
            dx_r, dx_z, dx_n = grad_gates_x[t].split(size, dim=1)
            dh_r, dh_z, dh_n = grad_gates_h[t].split(size, dim=1)
            torch.mul(dh, 1.0 - z, out=dx_n).mul_(1.0 - n_t * n_t)  # through n's tanh
            torch.mul(dh, h - n_t, out=dx_z).mul_(z).mul_(1.0 - z)
            torch.mul(dx_n, gh_n[t], out=dx_r).mul_(r).mul_(1.0 - r)
            torch.mul(dx_n, r, out=dh_n)
            dh_r.copy_(dx_r)
            dh_z.copy_(dx_z)
            dh = torch.addmm(dh.mul_(z), grad_gates_h[t], weight_hh)  # d h_{t-1}
        flat = grad_gates_h.view(steps * batch, 3 * size)
        grad_weight = torch.mm(flat.t(), hiddens[:steps].reshape(steps * batch, size))
        return grad_gates_x, dh, grad_weight, flat.sum(0)


def run_gru(gru: torch.nn.GRU, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``gru(inputs)`` for a one-layer, one-direction, batch-first GRU without initial state,
    through ``GruRecurrence`` in fp32 on the CPU (elsewhere torch's GRU, as ``run_lstm`` runs it).

    inputs: (batch, seq, input_dim) -> outputs (batch, seq, H), last state (1, batch, H)."""
    fast = (inputs.device.type == "cpu" and inputs.dtype == torch.float32
            and gru.weight_ih_l0.dtype == torch.float32 and not torch.is_autocast_enabled("cpu")
            and gru.num_layers == 1 and not gru.bidirectional and gru.batch_first and gru.bias
            and inputs.shape[1] > 0)
    if not fast:
        return run_lstm(gru, inputs)
    gates_x = torch.nn.functional.linear(inputs.transpose(0, 1), gru.weight_ih_l0,
                                         gru.bias_ih_l0)  # (seq, batch, 3H)
    h0 = inputs.new_zeros(inputs.shape[0], gru.hidden_size)
    outputs = GruRecurrence.apply(gates_x.contiguous(), h0, gru.weight_hh_l0, gru.bias_hh_l0)
    return outputs.transpose(0, 1), outputs[-1][None]
