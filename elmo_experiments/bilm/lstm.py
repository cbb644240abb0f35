"""LSTM layers with a projected, clipped output (the released biLM's cells), one direction each."""

from __future__ import annotations

import torch

from elmo_experiments.bilm.lstm_recurrence import LstmRecurrence
from elmo_experiments.precision import autocast_dtype

LstmState = tuple[torch.Tensor, torch.Tensor]  # h (batch, P), c (batch, C)


class ProjectedLstm(torch.nn.Module):
    """One LSTM layer, one direction: ``z = W_x x + W_h h + b``, gates [i, j, f, o] (TF order).

    Weights are stored (out, in) like ``torch.nn.Linear``: ``input_weight`` (4C, in),
    ``hidden_weight`` (4C, P), ``projection`` (P, C). ``bias`` already contains the +1 forget
    bias that the released files leave out. Rows whose sequence has ended keep their state, so
    the final state is the one after the last token.
    """

    def __init__(self, input_dim: int, cell_dim: int, projection_dim: int,
                 cell_clip: float | None, proj_clip: float | None) -> None:
        super().__init__()
        self.input_weight = torch.nn.Parameter(torch.zeros(4 * cell_dim, input_dim))
        self.hidden_weight = torch.nn.Parameter(torch.zeros(4 * cell_dim, projection_dim))
        self.bias = torch.nn.Parameter(torch.zeros(4 * cell_dim))
        self.projection = torch.nn.Parameter(torch.zeros(projection_dim, cell_dim))
        self.cell_dim, self.projection_dim = cell_dim, projection_dim
        self.cell_clip, self.proj_clip = cell_clip, proj_clip

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        with torch.no_grad():
            for weight in (self.input_weight, self.hidden_weight, self.projection):
                bound = (6.0 / (weight.shape[0] + weight.shape[1])) ** 0.5
                weight.uniform_(-bound, bound, generator=generator)
            self.bias.zero_()
            c = self.cell_dim
            self.bias[2 * c : 3 * c].fill_(1.0)  # the conventional forget bias

    def zero_state(self, batch: int, reference: torch.Tensor) -> LstmState:
        return (reference.new_zeros(batch, self.projection_dim),
                reference.new_zeros(batch, self.cell_dim))

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor,
                state: LstmState | None = None) -> tuple[torch.Tensor, LstmState]:
        # inputs: (batch, seq, input_dim), right-padded; lengths: (batch,)
        # -> outputs (batch, seq, P), zero at padding; final state (h, c)
        batch, seq, _ = inputs.shape
        h, c = state if state is not None else self.zero_state(batch, inputs)
        steps = int(lengths.max()) if batch else 0
        if steps == 0:
            return inputs.new_zeros(batch, seq, self.projection_dim), (h, c)
        active = torch.arange(steps, device=inputs.device)[:, None] < lengths[None, :]
        all_active = active.all(dim=1).tolist()  # per step: is every row still running?
        if torch.is_grad_enabled() or autocast_dtype(inputs.device.type) is not None:
            # training, or mixed precision (the fused recurrence handles bf16 products)
            outputs, final = self._steps_autograd(inputs[:, :steps], h, c, active, all_active)
        else:
            outputs, final = self._steps_inference(inputs[:, :steps], h, c, active, all_active)
        if steps < seq:
            outputs = torch.nn.functional.pad(outputs, (0, 0, 0, seq - steps))
        return outputs, final

    def _clip(self, tensor: torch.Tensor, limit: float | None, inplace: bool) -> torch.Tensor:
        if limit is None:
            return tensor
        return tensor.clamp_(-limit, limit) if inplace else tensor.clamp(-limit, limit)

    def _steps_autograd(self, inputs: torch.Tensor, h: torch.Tensor, c: torch.Tensor,
                        active: torch.Tensor, all_active: list[bool]
                        ) -> tuple[torch.Tensor, LstmState]:
        """The input product for all steps at once, then the fused recurrence."""
        gates_x = torch.nn.functional.linear(inputs, self.input_weight, self.bias)  # (b, s, 4C)
        outputs, h, c = LstmRecurrence.apply(gates_x, h, c, self.hidden_weight, self.projection,
                                             active, all_active,
                                             self.cell_clip, self.proj_clip)
        return outputs, (h, c)  # (batch, steps, P)

    def _steps_inference(self, inputs: torch.Tensor, h: torch.Tensor, c: torch.Tensor,
                         active: torch.Tensor, all_active: list[bool]
                         ) -> tuple[torch.Tensor, LstmState]:
        """Feature-major, in-place steps without autograd (the fast path on CPU).

        Every product is ``W @ x`` with the batch as the short last dimension, which MKL runs
        much faster than ``x @ W`` for a batch of 64, and the gates are contiguous row blocks.
        tanh is ``torch.tanh`` (within 3e-8 of float64's; ``2 sigmoid(2x) - 1``, once used here
        for speed on AVX2, errs by up to 1.8e-7 and put the fixture outputs 1.2e-6 from the
        reference on AVX-512 CPUs, where ``torch.tanh`` is also the faster of the two).
        """
        size = self.cell_dim
        batch, steps, _ = inputs.shape
        columns = inputs.permute(2, 1, 0).reshape(-1, steps * batch)  # (in, steps * batch)
        gates_x = torch.addmm(self.bias[:, None], self.input_weight, columns)  # (4C, s * b)
        h_t, c_t = h.t().contiguous(), c.t().contiguous()  # (P, batch), (C, batch)
        outputs = inputs.new_empty(steps, self.projection_dim, batch)
        z = inputs.new_empty(4 * size, batch)
        cell_out = inputs.new_empty(size, batch)
        for t in range(steps):
            gates = gates_x[:, t * batch : (t + 1) * batch]
            torch.addmm(gates, self.hidden_weight, h_t, out=z)  # (4C, batch): [i, j, f, o]
            z[:size].sigmoid_()
            z[size : 2 * size].tanh_()
            z[2 * size :].sigmoid_()
            c_new = torch.addcmul(z[2 * size : 3 * size] * c_t, z[:size], z[size : 2 * size])
            self._clip(c_new, self.cell_clip, inplace=True)  # (C, batch)
            torch.tanh(c_new, out=cell_out)
            cell_out.mul_(z[3 * size :])
            h_new = torch.mm(self.projection, cell_out, out=outputs[t])  # (P, batch)
            self._clip(h_new, self.proj_clip, inplace=True)
            if all_active[t]:
                h_t, c_t = h_new, c_new
            else:
                keep = active[t][None, :]  # (1, batch)
                h_t, c_t = torch.where(keep, h_new, h_t), torch.where(keep, c_new, c_t)
                h_new.mul_(keep)
        return outputs.permute(2, 0, 1), (h_t.t(), c_t.t())  # (batch, steps, P)
