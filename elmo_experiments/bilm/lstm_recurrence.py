"""The training recurrence of a projected, clipped LSTM with a hand-written backward pass.

Autograd would record some twenty small operations per time step and replay them one by one;
here the forward pass keeps only what the backward pass needs (gate activations, cell states,
clip masks) and the backward pass runs the recurrence in reverse with two small products per
step, leaving the weight gradients to one large product each over all steps. Gradients equal
autograd's through the same operations (``tests/bilm/test_lstm.py`` checks both, and
``gradcheck`` in float64).

Gates are [i, j, f, o] (TF order); ``j`` and the cell output use ``torch.tanh``, as the
inference path does (``lstm.py``). Under bf16 autocast the products run in bf16 and everything
else (gates, cell states, gradients) stays in the weights' precision.
"""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.precision import autocast_dtype


def _mm(a: torch.Tensor, b: torch.Tensor, low: torch.dtype | None) -> torch.Tensor:
    """a @ b, in ``low`` precision when given (``b`` already in it), returned in a's dtype."""
    if low is None:
        return torch.mm(a, b)
    return torch.mm(a.to(low), b).to(a.dtype)


def _low(a: torch.Tensor, low: torch.dtype | None) -> torch.Tensor:
    return a if low is None else a.to(low)


def _sigmoid_gates(z: torch.Tensor, size: int) -> torch.Tensor:
    """In place: sigmoid of i, f, o and tanh of j, for z (batch, 4C)."""
    z[:, :size].sigmoid_()
    z[:, size : 2 * size].tanh_()
    z[:, 2 * size :].sigmoid_()
    return z


class LstmRecurrence(torch.autograd.Function):
    """outputs, h, c = recurrence(gates_x, h0, c0, hidden_weight, projection, active, ...).

    gates_x (batch, steps, 4C) is ``W_x x + b`` for every step; ``active`` (steps, batch) says
    which rows are still running (ended rows keep their state and output zero).
    """

    @staticmethod
    def forward(ctx: Any, gates_x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                hidden_weight: torch.Tensor, projection: torch.Tensor, active: torch.Tensor,
                all_active: list[bool], cell_clip: float | None, proj_clip: float | None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        low = autocast_dtype(gates_x.device.type)
        with torch.autocast(gates_x.device.type, enabled=False):
            return LstmRecurrence._forward(ctx, low, gates_x, h0, c0, hidden_weight, projection,
                                           active, all_active, cell_clip, proj_clip)

    @staticmethod
    def _forward(ctx: Any, low: torch.dtype | None, gates_x: torch.Tensor, h0: torch.Tensor,
                 c0: torch.Tensor, hidden_weight: torch.Tensor, projection: torch.Tensor,
                 active: torch.Tensor, all_active: list[bool], cell_clip: float | None,
                 proj_clip: float | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        batch, steps, four_c = gates_x.shape
        size = four_c // 4
        p = projection.shape[0]
        dtype = hidden_weight.dtype  # gates, states and outputs: the weights' precision
        gates = gates_x.new_empty(steps, batch, four_c, dtype=dtype)  # activations [i, j, f, o]
        cells = gates_x.new_empty(steps + 1, batch, size, dtype=dtype)  # c_{t-1}, t = 0..steps
        hiddens = gates_x.new_empty(steps + 1, batch, p, dtype=dtype)  # h_{t-1}
        cell_out = gates_x.new_empty(steps, batch, size, dtype=dtype)  # o * tanh(c_t)
        tanh_c = gates_x.new_empty(steps, batch, size, dtype=dtype)
        c_ok = torch.ones(steps, batch, size, dtype=torch.bool) if cell_clip else None
        h_ok = torch.ones(steps, batch, p, dtype=torch.bool) if proj_clip else None
        outputs = gates_x.new_empty(batch, steps, p, dtype=dtype)
        cells[0], hiddens[0] = c0, h0
        weight_t, projection_t = hidden_weight.t(), projection.t()
        if low is not None:
            weight_t, projection_t = weight_t.to(low), projection_t.to(low)
        for t in range(steps):
            h, c = hiddens[t], cells[t]
            if low is None:
                z = torch.addmm(gates_x[:, t], h, weight_t, out=gates[t])  # (batch, 4C)
            else:
                z = gates[t].copy_(gates_x[:, t]).add_(_mm(h, weight_t, low))
            _sigmoid_gates(z, size)
            i, j, f, o = z.split(size, dim=1)
            c_new = torch.addcmul(f * c, i, j)  # (batch, C)
            if cell_clip:
                torch.le(c_new.abs(), cell_clip, out=c_ok[t])
                c_new.clamp_(-cell_clip, cell_clip)
            torch.tanh(c_new, out=tanh_c[t])
            torch.mul(tanh_c[t], o, out=cell_out[t])
            h_new = _mm(cell_out[t], projection_t, low)  # (batch, P)
            if proj_clip:
                torch.le(h_new.abs(), proj_clip, out=h_ok[t])
                h_new.clamp_(-proj_clip, proj_clip)
            if all_active[t]:
                cells[t + 1], hiddens[t + 1] = c_new, h_new
                outputs[:, t] = h_new
            else:
                keep = active[t][:, None]  # (batch, 1)
                torch.where(keep, c_new, c, out=cells[t + 1])
                torch.where(keep, h_new, h, out=hiddens[t + 1])
                outputs[:, t] = h_new * keep
        ctx.save_for_backward(gates, cells, hiddens, cell_out, tanh_c, hidden_weight,
                              projection, active)
        ctx.masks = (c_ok, h_ok)
        ctx.all_active = all_active
        ctx.low = low
        return outputs, hiddens[steps].clone(), cells[steps].clone()

    @staticmethod
    def backward(ctx: Any, grad_outputs: torch.Tensor, grad_h: torch.Tensor,
                 grad_c: torch.Tensor) -> tuple[Any, ...]:
        gates, cells, hiddens, cell_out, tanh_c, hidden_weight, projection, active = \
            ctx.saved_tensors
        c_ok, h_ok = ctx.masks
        low = ctx.low
        weight, proj = hidden_weight, projection
        if low is not None:
            weight, proj = weight.to(low), proj.to(low)
        grad_outputs = grad_outputs.to(gates.dtype)
        steps, batch, four_c = gates.shape
        size = four_c // 4
        grad_gates = gates.new_empty(steps, batch, four_c)  # d loss / d z_t = d / d gates_x
        grad_h_raw = gates.new_empty(steps, batch, projection.shape[0])
        dh = grad_h.clone() if grad_h is not None else hiddens.new_zeros(hiddens.shape[1:])
        dc = grad_c.clone() if grad_c is not None else cells.new_zeros(cells.shape[1:])
        for t in reversed(range(steps)):
            keep = None if ctx.all_active[t] else active[t][:, None].to(dh.dtype)  # (b, 1)
            d_new = dh + grad_outputs[:, t]  # (batch, P): d h_new (only active rows)
            if keep is not None:
                d_new.mul_(keep)
            if h_ok is not None:
                d_new.mul_(h_ok[t])
            grad_h_raw[t] = d_new
            d_cell_out = _mm(d_new, proj, low)  # (batch, C)
            i, j, f, o = gates[t].split(size, dim=1)
            th = tanh_c[t]
            dz = grad_gates[t]
            di, dj, df, do = dz.split(size, dim=1)
            torch.mul(d_cell_out, th, out=do).mul_(o).mul_(1.0 - o)  # d z_o
            d_c = d_cell_out.mul_(o).mul_(1.0 - th * th)  # through tanh(c_t)
            d_c.add_(dc if keep is None else dc * keep)
            if c_ok is not None:
                d_c.mul_(c_ok[t])
            torch.mul(d_c, j, out=di).mul_(i).mul_(1.0 - i)
            torch.mul(d_c, i, out=dj).mul_(1.0 - j * j)
            torch.mul(d_c, cells[t], out=df).mul_(f).mul_(1.0 - f)
            dc_prev = d_c.mul_(f)  # (batch, C)
            dh_prev = _mm(dz, weight, low)  # (batch, P)
            if keep is None:
                dh, dc = dh_prev, dc_prev
            else:
                dh = dh_prev + dh * (1.0 - keep)
                dc = dc_prev + dc * (1.0 - keep)
        flat_gates = grad_gates.view(steps * batch, four_c)
        grad_weight = _mm(flat_gates.t(), _low(hiddens[:steps].reshape(steps * batch, -1), low),
                          low)  # (4C, P)
        grad_projection = _mm(grad_h_raw.reshape(steps * batch, -1).t(),
                              _low(cell_out.reshape(steps * batch, size), low), low)  # (P, C)
        return (grad_gates.transpose(0, 1), dh, dc, grad_weight, grad_projection,
                None, None, None, None)
