"""The recurrence of He et al.'s highway LSTM layer (``alternating_lstm.py``) with a
hand-written backward pass.

Autograd records about fifteen small operations a time step and replays them one by one, and
each step's recurrent product adds its own small weight-gradient product. Here the forward
pass keeps the gate activations, cells and states, and the backward pass runs the recurrence in
reverse with one product a step, leaving the recurrent weight's gradient to one product over
all steps. Per step (gates [i, f, m, o, r]; ``valid`` 0 at padding, ``keep`` the recurrent
dropout mask):

    g = gx_t + s U^T;  i, f, o, r = sigmoid(g_i, g_f, g_o, g_r);  m = tanh(g_m)
    c_new = i m + f c;  y = r (o tanh(c_new)) + (1 - r) hw_t
    c = c_new, s = y keep where valid, else unchanged;  output_t = y

``tests/modules/test_alternating_lstm.py`` checks outputs and gradients against the layer's
equations run by autograd, and ``gradcheck`` in float64.
"""

from __future__ import annotations

from typing import Any

import torch

GATES = 5  # input, forget, memory, output, highway


class HighwayLstmRecurrence(torch.autograd.Function):
    """outputs = recurrence(gates_x, highway_x, weight, valid, keep, all_valid).

    gates_x (steps, batch, 5h): ``W x_t + b`` of every step; highway_x (steps, batch, h):
    ``W_x x_t``; weight (5h, h): U; valid (steps, batch, 1) 1.0 at real positions; keep
    (batch, h) or None; all_valid: per step, whether every row is real. -> (steps, batch, h),
    each step's y (also at padding: mask it)."""

    @staticmethod
    def forward(ctx: Any, gates_x: torch.Tensor, highway_x: torch.Tensor, weight: torch.Tensor,
                valid: torch.Tensor, keep: torch.Tensor | None, all_valid: list[bool]
                ) -> torch.Tensor:
        steps, batch, five_h = gates_x.shape
        h = five_h // GATES
        gates = gates_x.new_empty(steps, batch, five_h)  # [i, f, (sigmoid m), o, r]
        memory = gates_x.new_empty(steps, batch, h)  # tanh(g_m)
        cells = gates_x.new_zeros(steps + 1, batch, h)  # c before step t, t = 0..steps
        states = gates_x.new_zeros(steps + 1, batch, h)  # s before step t
        tanh_c = gates_x.new_empty(steps, batch, h)  # tanh(c_new)
        outputs = gates_x.new_empty(steps, batch, h)  # y
        weight_t = weight.t()  # (h, 5h)
        g_at, m_at, th_at, y_at = gates.unbind(0), memory.unbind(0), tanh_c.unbind(0), \
            outputs.unbind(0)
        c_at, s_at, gx_at, hw_at, v_at = cells.unbind(0), states.unbind(0), gates_x.unbind(0), \
            highway_x.unbind(0), (valid > 0).unbind(0)
        for t in range(steps):
            g = torch.addmm(gx_at[t], s_at[t], weight_t, out=g_at[t])  # (batch, 5h)
            torch.tanh(g[:, 2 * h:3 * h], out=m_at[t])
            i, f, _, o, r = g.sigmoid_().chunk(GATES, dim=1)
            c_new = torch.addcmul(f * c_at[t], i, m_at[t])  # (batch, h)
            torch.tanh(c_new, out=th_at[t])
            torch.lerp(hw_at[t], torch.mul(o, th_at[t]), r, out=y_at[t])
            carried = y_at[t] if keep is None else y_at[t] * keep
            if all_valid[t]:
                c_at[t + 1].copy_(c_new)
                s_at[t + 1].copy_(carried)
            else:
                torch.where(v_at[t], c_new, c_at[t], out=c_at[t + 1])
                torch.where(v_at[t], carried, s_at[t], out=s_at[t + 1])
        ctx.save_for_backward(gates, memory, cells, states, tanh_c, highway_x, weight, valid,
                              keep)
        ctx.all_valid = all_valid
        return outputs

    @staticmethod
    def backward(ctx: Any, grad_outputs: torch.Tensor) -> tuple[Any, ...]:
        gates, memory, cells, states, tanh_c, highway_x, weight, valid, keep = ctx.saved_tensors
        steps, batch, five_h = gates.shape
        h = five_h // GATES
        i, f, _, o, r = gates.chunk(GATES, dim=2)  # each (steps, batch, h)
        out = o * tanh_c  # o tanh(c_new)
        # every step's local derivatives at once
        dy_dr = (out - highway_x) * r * (1.0 - r)  # d y / d g_r
        dy_dc = r * o * (1.0 - tanh_c * tanh_c)  # d y / d c_new
        dy_do = r * tanh_c * o * (1.0 - o)  # d y / d g_o
        dc_di = memory * i * (1.0 - i)  # d c_new / d g_i
        dc_dm = i * (1.0 - memory * memory)  # d c_new / d g_m
        dc_df = cells[:steps] * f * (1.0 - f)  # d c_new / d g_f
        grad_gates = torch.empty_like(gates)  # d loss / d g
        grad_highway = torch.empty_like(highway_x)  # d loss / d hw
        d_at = grad_gates.unbind(0)
        d_i, d_f, d_m, d_o, d_r = (part.unbind(0) for part in grad_gates.chunk(GATES, dim=2))
        a_r, a_c, a_o, a_i, a_m, a_f = (x.unbind(0) for x in (dy_dr, dy_dc, dy_do, dc_di, dc_dm,
                                                               dc_df))
        f_at, r_at, v_at = f.unbind(0), r.unbind(0), valid.unbind(0)
        g_at, dhw_at = grad_outputs.contiguous().unbind(0), grad_highway.unbind(0)
        ds = torch.zeros_like(states[0])  # d loss / d s after step t
        dc = torch.zeros_like(cells[0])  # d loss / d c after step t
        for t in reversed(range(steps)):
            every = ctx.all_valid[t]
            carried = ds if keep is None else ds * keep
            dy = g_at[t] + (carried if every else carried * v_at[t])  # (batch, h)
            dc_new = dc if every else dc * v_at[t]
            torch.mul(dy, a_r[t], out=d_r[t])
            torch.mul(dy, a_o[t], out=d_o[t])
            torch.mul(dy, 1.0 - r_at[t], out=dhw_at[t])
            dc_new = torch.addcmul(dc_new, dy, a_c[t])  # d loss / d c_new
            torch.mul(dc_new, a_i[t], out=d_i[t])
            torch.mul(dc_new, a_m[t], out=d_m[t])
            torch.mul(dc_new, a_f[t], out=d_f[t])
            if every:
                ds = torch.mm(d_at[t], weight)  # (batch, h)
                dc = dc_new.mul_(f_at[t])
            else:
                ds = torch.addmm(ds * (1.0 - v_at[t]), d_at[t], weight)
                dc = torch.addcmul(dc * (1.0 - v_at[t]), dc_new, f_at[t])
        grad_weight = torch.mm(grad_gates.reshape(steps * batch, five_h).t(),
                               states[:steps].reshape(steps * batch, h))  # (5h, h)
        return grad_gates, grad_highway, grad_weight, None, None, None
