"""LSTM layers with a projected, clipped output (the released biLM's cells), one direction each."""

from __future__ import annotations

import torch

LstmState = tuple[torch.Tensor, torch.Tensor]  # h (batch, P), c (batch, C)


class ProjectedLstm(torch.nn.Module):
    """One LSTM layer, one direction: ``z = [x, h] W + B``, gates [i, j, f, o] (TF order).

    ``bias`` already contains the +1 forget bias that the released files leave out. Rows whose
    sequence has ended keep their state, so the final state is the one after the last token.
    """

    def __init__(self, input_dim: int, cell_dim: int, projection_dim: int,
                 cell_clip: float | None, proj_clip: float | None) -> None:
        super().__init__()
        self.input_weight = torch.nn.Parameter(torch.zeros(input_dim, 4 * cell_dim))
        self.hidden_weight = torch.nn.Parameter(torch.zeros(projection_dim, 4 * cell_dim))
        self.bias = torch.nn.Parameter(torch.zeros(4 * cell_dim))
        self.projection = torch.nn.Parameter(torch.zeros(cell_dim, projection_dim))
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
        # input contributions of all steps in one product, time-major: (steps, batch, 4C)
        time_major = inputs[:, :steps].transpose(0, 1).reshape(steps * batch, -1)
        gates_x = torch.addmm(self.bias, time_major, self.input_weight).view(steps, batch, -1)
        if torch.is_grad_enabled():
            out = self._steps_autograd(gates_x, h, c, active, all_active)
        else:
            out = self._steps_inference(gates_x, h, c, active, all_active)
        outputs, final = out
        outputs = outputs.transpose(0, 1)  # (batch, steps, P)
        if steps < seq:
            outputs = torch.nn.functional.pad(outputs, (0, 0, 0, seq - steps))
        return outputs, final

    def _clip(self, tensor: torch.Tensor, limit: float | None, inplace: bool) -> torch.Tensor:
        if limit is None:
            return tensor
        return tensor.clamp_(-limit, limit) if inplace else tensor.clamp(-limit, limit)

    def _steps_autograd(self, gates_x: torch.Tensor, h: torch.Tensor, c: torch.Tensor,
                        active: torch.Tensor, all_active: list[bool]
                        ) -> tuple[torch.Tensor, LstmState]:
        """Out-of-place steps (for training); same arithmetic as the inference path."""
        size = self.cell_dim
        outputs = []
        for t in range(gates_x.shape[0]):
            z = torch.addmm(gates_x[t], h, self.hidden_weight)  # (batch, 4C)
            i, j, f, o = z.split(size, dim=1)
            c_new = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(j))
            c_new = self._clip(c_new, self.cell_clip, inplace=False)  # (batch, C)
            h_new = (torch.tanh(c_new) * torch.sigmoid(o)).mm(self.projection)  # (batch, P)
            h_new = self._clip(h_new, self.proj_clip, inplace=False)
            if all_active[t]:
                h, c = h_new, c_new
            else:
                keep = active[t][:, None]  # (batch, 1)
                h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
                h_new = h_new * keep
            outputs.append(h_new)
        return torch.stack(outputs), (h, c)  # (steps, batch, P)

    def _steps_inference(self, gates_x: torch.Tensor, h: torch.Tensor, c: torch.Tensor,
                         active: torch.Tensor, all_active: list[bool]
                         ) -> tuple[torch.Tensor, LstmState]:
        """In-place steps without autograd: no per-step allocation of gate-sized tensors."""
        size = self.cell_dim
        steps, batch, _ = gates_x.shape
        outputs = gates_x.new_empty(steps, batch, self.projection_dim)
        z = gates_x.new_empty(batch, 4 * size)
        cell_out = gates_x.new_empty(batch, size)
        for t in range(steps):
            torch.addmm(gates_x[t], h, self.hidden_weight, out=z)  # (batch, 4C): [i, j, f, o]
            z[:, :size].sigmoid_()
            z[:, 2 * size :].sigmoid_()
            z[:, size : 2 * size].tanh_()
            c_new = torch.addcmul(z[:, 2 * size : 3 * size] * c, z[:, :size],
                                  z[:, size : 2 * size])  # (batch, C)
            self._clip(c_new, self.cell_clip, inplace=True)
            torch.tanh(c_new, out=cell_out)
            cell_out.mul_(z[:, 3 * size :])
            h_new = torch.mm(cell_out, self.projection, out=outputs[t])  # (batch, P)
            self._clip(h_new, self.proj_clip, inplace=True)
            if all_active[t]:
                h, c = h_new, c_new
            else:
                keep = active[t][:, None]  # (batch, 1)
                h = torch.where(keep, h_new, h)
                c = torch.where(keep, c_new, c)
                h_new.mul_(keep)
        return outputs, (h, c)
