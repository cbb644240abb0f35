"""A one-layer GRU (torch.nn.GRU's equations and parameters) with a hand-written backward pass.

PyTorch's GRU has no oneDNN kernel on the CPU: it runs each time step as a small product and
about ten element-wise operations, each an autograd node replayed one by one in the backward
pass. Here the input products of all steps are one product (autograd's); the forward pass runs
one product and five element-wise operations a step, into buffers made once, and keeps the
gate activations; the backward pass takes every step's local derivatives at once, then runs
the recurrence in reverse with one product and five element-wise operations a step, leaving
the recurrent weight's gradient to one large product over all steps; on SQuAD's CPU-size
shapes (batch 45, 45 cells) it is faster than torch's GRU (docs/speed.md). Gates are torch's
[r, z, n]:

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
        gates_h = gates_x.new_empty(steps, batch, three_h)  # h W_hh + b_hh
        rz = gates_x.new_empty(steps, batch, 2 * size)  # sigmoid activations [r, z]
        n = gates_x.new_empty(steps, batch, size)  # tanh activations
        hiddens[0] = h0
        weight_t = weight_hh.t()  # (H, 3H)
        # every step's views, made once (a view made in the loop costs as much as an operation)
        h_at, gh_at, rz_at, n_at = hiddens.unbind(0), gates_h.unbind(0), rz.unbind(0), n.unbind(0)
        gx_rz, gx_n = gates_x[..., : 2 * size].unbind(0), gates_x[..., 2 * size :].unbind(0)
        gh_rz, gh_n = gates_h[..., : 2 * size].unbind(0), gates_h[..., 2 * size :].unbind(0)
        r_at, z_at = rz[..., :size].unbind(0), rz[..., size:].unbind(0)
        for t in range(steps):
            torch.addmm(bias_hh, h_at[t], weight_t, out=gh_at[t])  # (batch, 3H)
            torch.add(gx_rz[t], gh_rz[t], out=rz_at[t]).sigmoid_()
            torch.addcmul(gx_n[t], r_at[t], gh_n[t], out=n_at[t]).tanh_()
            torch.lerp(n_at[t], h_at[t], z_at[t], out=h_at[t + 1])  # n + z (h - n)
        ctx.save_for_backward(hiddens, gates_h, rz, n, weight_hh)
        return hiddens[1:]

    @staticmethod
    def backward(ctx: Any, grad_outputs: torch.Tensor) -> tuple[Any, ...]:
        hiddens, gates_h, rz, n, weight_hh = ctx.saved_tensors
        steps, batch, size = n.shape
        r, z = rz[..., :size], rz[..., size:]
        # the local derivatives of every step at once: d n / d h', d z-gate / d h',
        # d r-gate / d n-gate (each (steps, batch, H))
        through_n = (1.0 - z) * (1.0 - n * n)
        through_z = (hiddens[:steps] - n) * z * (1.0 - z)
        through_r = gates_h[..., 2 * size :] * r * (1.0 - r)
        grad_n = torch.empty_like(n)  # d loss / d (x W_in + b_in + r (h W_hn + b_hn))
        grad_gates_h = torch.empty_like(gates_h)  # d loss / d (h W_hh + b_hh)
        d_r, d_z = grad_gates_h[..., :size].unbind(0), grad_gates_h[..., size : 2 * size].unbind(0)
        d_hn, d_gh, d_n = grad_gates_h[..., 2 * size :].unbind(0), grad_gates_h.unbind(0), \
            grad_n.unbind(0)
        a_n, a_z, a_r = through_n.unbind(0), through_z.unbind(0), through_r.unbind(0)
        r_at, z_at, g_at = r.unbind(0), z.unbind(0), grad_outputs.contiguous().unbind(0)
        dh = torch.zeros_like(hiddens[0])  # (batch, H): from the later steps
        for t in reversed(range(steps)):
            dh.add_(g_at[t])  # d h_t
            torch.mul(dh, a_n[t], out=d_n[t])
            torch.mul(dh, a_z[t], out=d_z[t])
            torch.mul(d_n[t], a_r[t], out=d_r[t])
            torch.mul(d_n[t], r_at[t], out=d_hn[t])
            dh = torch.addmm(dh.mul_(z_at[t]), d_gh[t], weight_hh)  # d h_{t-1}
        flat = grad_gates_h.view(steps * batch, 3 * size)
        grad_weight = torch.mm(flat.t(), hiddens[:steps].reshape(steps * batch, size))
        grad_gates_x = torch.cat([grad_gates_h[..., : 2 * size], grad_n], dim=2)
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
    gates_x = torch.nn.functional.linear(inputs, gru.weight_ih_l0, gru.bias_ih_l0)
    h0 = inputs.new_zeros(inputs.shape[0], gru.hidden_size)
    outputs = GruRecurrence.apply(gates_x.transpose(0, 1).contiguous(), h0,  # (seq, batch, 3H)
                                  gru.weight_hh_l0, gru.bias_hh_l0)
    return outputs.transpose(0, 1), outputs[-1][None]
