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
        batch, seq, _ = inputs.shape
        h, c = state if state is not None else self.zero_state(batch, inputs)
        c_dim = self.cell_dim
        gates_x = torch.addmm(self.bias, inputs.reshape(batch * seq, -1), self.input_weight)
        gates_x = gates_x.view(batch, seq, 4 * c_dim)  # (batch, seq, 4C)
        steps = int(lengths.max()) if batch else 0
        active = torch.arange(steps, device=inputs.device)[:, None] < lengths[None, :]
        all_active = active.all(dim=1).tolist()  # per step: every row still running?
        outputs = []
        for t in range(steps):
            z = torch.addmm(gates_x[:, t], h, self.hidden_weight)  # (batch, 4C)
            i, j, f, o = z.split(c_dim, dim=1)
            c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(j)  # (batch, C)
            if self.cell_clip is not None:
                c_new = c_new.clamp(-self.cell_clip, self.cell_clip)
            h_new = (torch.sigmoid(o) * torch.tanh(c_new)).mm(self.projection)  # (batch, P)
            if self.proj_clip is not None:
                h_new = h_new.clamp(-self.proj_clip, self.proj_clip)
            if all_active[t]:
                h, c = h_new, c_new
            else:
                keep = active[t][:, None]  # (batch, 1)
                h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
                h_new = h_new * keep
            outputs.append(h_new)
        if not outputs:
            return inputs.new_zeros(batch, seq, self.projection_dim), (h, c)
        out = torch.stack(outputs, dim=1)  # (batch, steps, P)
        if steps < seq:
            out = torch.nn.functional.pad(out, (0, 0, 0, seq - steps))
        return out, (h, c)  # (batch, seq, P), final state
