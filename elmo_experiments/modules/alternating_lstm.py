"""The deep LSTM of He et al. (2017) for semantic role labelling: layers whose direction
alternates (forward, backward, forward, ...), highway connections between them, variational
recurrent dropout, orthogonal initialisation and a forget-gate bias of 1.

Each layer's cell (per time step t, input x_t, previous output h and memory c):

    i, f, o = sigmoid(W_* x_t + U_* h + b_*);  m = tanh(W_m x_t + U_m h + b_m)
    c = i * m + f * c;  h' = o * tanh(c)
    r = sigmoid(W_r x_t + U_r h + b_r)            (the highway gate)
    h = r * h' + (1 - r) * W_x x_t                (the layer's output)

and during training the ``h`` carried to the next step is multiplied by one dropout mask per
sequence (the same at every step). Padding never reaches a real position: a backward layer
reads each sequence reversed within its own length.
"""

from __future__ import annotations

import torch

from elmo_experiments.config.registry import Probability, Size, register
from elmo_experiments.modules.dropout import keep_mask
from elmo_experiments.modules.encoders import reverse_padded
from elmo_experiments.modules.highway_lstm_recurrence import GATES, HighwayLstmRecurrence


class HighwayLstmLayer(torch.nn.Module):
    """One direction of one layer: (batch, seq, input_dim) -> (batch, seq, hidden)."""

    def __init__(self, input_dim: int, hidden: int, go_forward: bool,
                 recurrent_dropout: float) -> None:
        super().__init__()
        self.hidden = hidden
        self.go_forward = go_forward
        self.recurrent_dropout = recurrent_dropout
        self.fused = True  # the hand-written recurrence (False: autograd's loop, the reference)
        # the input's five gate pre-activations and its highway projection, side by side
        self.input_linearity = torch.nn.Linear(input_dim, (GATES + 1) * hidden, bias=False)
        self.state_linearity = torch.nn.Linear(hidden, GATES * hidden)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        h = self.hidden
        with torch.no_grad():
            for block in range(GATES + 1):  # orthogonal blocks, one per gate
                torch.nn.init.orthogonal_(self.input_linearity.weight[block * h:(block + 1) * h])
            for block in range(GATES):
                torch.nn.init.orthogonal_(self.state_linearity.weight[block * h:(block + 1) * h])
            self.state_linearity.bias.zero_()
            self.state_linearity.bias[h:2 * h].fill_(1.0)  # the forget gate starts open

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, input_dim); mask: (batch, seq)
        lengths = mask.sum(dim=1)
        if not self.go_forward:
            inputs = reverse_padded(inputs, lengths)
        batch, _, _ = inputs.shape
        h = self.hidden
        projected = self.input_linearity(inputs)  # (batch, seq, 6h), all steps at once
        keep = None
        if self.training and self.recurrent_dropout > 0.0:
            keep = keep_mask(inputs, (batch, h), self.recurrent_dropout)  # (batch, h)
        gates_x = projected[:, :, : GATES * h] + self.state_linearity.bias  # (batch, seq, 5h)
        highway_x = projected[:, :, GATES * h:]  # (batch, seq, h)
        if self.fused and not torch.is_autocast_enabled(inputs.device.type):
            outputs = HighwayLstmRecurrence.apply(
                gates_x.transpose(0, 1).contiguous(), highway_x.transpose(0, 1).contiguous(),
                self.state_linearity.weight, mask.t()[:, :, None].to(inputs.dtype), keep,
                mask.all(dim=0).tolist()).transpose(0, 1)  # (batch, seq, h)
        else:
            outputs = self._loop(gates_x, highway_x, mask, keep)
        stacked = outputs * mask[:, :, None]  # (batch, seq, h), zero at padding
        return stacked if self.go_forward else reverse_padded(stacked, lengths)

    def _loop(self, gates_x: torch.Tensor, highway_x: torch.Tensor, mask: torch.Tensor,
              keep: torch.Tensor | None) -> torch.Tensor:
        """Autograd's loop over the same equations (the reference, and the path under
        autocast, where bf16 products meet fp32 states): each
        step's y, (batch, seq, h). Each step's slices are taken once: a slice taken inside the
        loop would make its backward write the step's gradient into a zero tensor of the whole
        projection, seq times."""
        h = self.hidden
        state = gates_x.new_zeros(gates_x.shape[0], h)
        memory = gates_x.new_zeros(gates_x.shape[0], h)
        gate_inputs, highway_inputs = gates_x.unbind(1), highway_x.unbind(1)  # seq x (batch, .)
        valid = mask.bool()[:, :, None].unbind(1)  # seq x (batch, 1): padding keeps the state
        weight_t = self.state_linearity.weight.t()  # (h, 5h)
        outputs = []
        for gate_input, highway_input, real in zip(gate_inputs, highway_inputs, valid,
                                                   strict=True):
            gates = torch.addmm(gate_input, state, weight_t)  # (batch, 5h)
            i, f, _, o, r = gates.sigmoid().chunk(GATES, dim=-1)  # m's sigmoid is not used
            m = gates[:, 2 * h:3 * h].tanh()
            new_memory = i * m + f * memory  # plain arithmetic: under autocast the dtypes mix
            output = r * (o * new_memory.tanh()) + (1.0 - r) * highway_input
            memory = torch.where(real, new_memory, memory)
            state = torch.where(real, output if keep is None else output * keep, state)
            outputs.append(output)
        return torch.stack(outputs, dim=1)


class AlternatingLstm(torch.nn.Module):
    """``num_layers`` highway LSTM layers, the first forward, the next backward, and so on."""

    def __init__(self, input_dim: int, hidden_size: Size = 300, num_layers: Size = 8,
                 recurrent_dropout: Probability = 0.1) -> None:  # on the carried state
        super().__init__()
        self.layers = torch.nn.ModuleList(
            HighwayLstmLayer(input_dim if k == 0 else hidden_size, hidden_size,
                             go_forward=k % 2 == 0, recurrent_dropout=recurrent_dropout)
            for k in range(num_layers))
        self.output_dim = hidden_size

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, input_dim); mask: (batch, seq) -> (batch, seq, hidden)
        output = inputs
        for layer in self.layers:
            output = layer(output, mask)
        return output


register(
    "seq2seq_encoder",
    "alternating_lstm",
    context=("input_dim",),
)(AlternatingLstm)
