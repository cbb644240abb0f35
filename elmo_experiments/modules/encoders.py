"""Sequence encoders: stacked bidirectional LSTMs or GRUs with variational dropout on every
layer's input."""

from __future__ import annotations

import torch

from elmo_experiments.config.registry import AT_LEAST_ONE, PROBABILITY, Param, register, sizes
from elmo_experiments.modules.dropout import VariationalDropout
from elmo_experiments.modules.gru_recurrence import run_gru
from elmo_experiments.modules.indexing import gather_rows
from elmo_experiments.precision import run_lstm


def reverse_padded(inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence within its own length; padding stays at the end.

    inputs: (batch, seq, dim); lengths: (batch,). Applying it twice is the identity.
    """
    seq = inputs.shape[1]
    positions = torch.arange(seq, device=inputs.device)[None, :]  # (1, seq)
    source = lengths[:, None] - 1 - positions  # (batch, seq)
    source = torch.where(source >= 0, source, positions.expand_as(source))
    return gather_rows(inputs, source)


RNN_CELLS = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}


class StackedRnn(torch.nn.Module):
    """LSTM (or GRU) layers of possibly different sizes (e.g. 200 then 100), each bidirectional.

    The backward direction runs a forward LSTM over each sequence reversed within its length,
    so padding never reaches a real position; on CPU this dense form is faster than packing.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_sizes: list[int],
        bidirectional: bool = True,
        input_dropout: float = 0.5,
        cell: str = "lstm",
    ) -> None:
        super().__init__()
        rnn = RNN_CELLS[cell]
        self.forward_layers = torch.nn.ModuleList()
        self.backward_layers = torch.nn.ModuleList()
        size = input_dim
        for hidden in hidden_sizes:
            self.forward_layers.append(rnn(size, hidden, batch_first=True))
            if bidirectional:
                self.backward_layers.append(rnn(size, hidden, batch_first=True))
            size = hidden * (2 if bidirectional else 1)
        self.bidirectional = bidirectional
        self.run = run_gru if cell == "gru" else run_lstm
        self.dropout = VariationalDropout(input_dropout)
        self.output_dim = size

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, input_dim); mask: (batch, seq)
        lengths = mask.sum(dim=1)  # (batch,)
        output = inputs
        for layer, forward_lstm in enumerate(self.forward_layers):
            dropped = self.dropout(output)  # (batch, seq, dim)
            forward_states, _ = self.run(forward_lstm, dropped)  # (batch, seq, hidden)
            if self.bidirectional:
                reversed_states, _ = self.run(self.backward_layers[layer],
                                              reverse_padded(dropped, lengths))
                backward_states = reverse_padded(reversed_states, lengths)
                output = torch.cat([forward_states, backward_states], dim=-1)
            else:
                output = forward_states
        return output * mask[:, :, None]  # (batch, seq, output_dim), zero at padding


StackedLstm = StackedRnn  # the name the LSTM models use

RNN_PARAMS = [
    Param("hidden_sizes", list, bounds=AT_LEAST_ONE, check=sizes,
          doc="one width per layer (per direction)"),
    Param("bidirectional", bool, True),
    Param("input_dropout", float, 0.5, bounds=PROBABILITY),
]
register("seq2seq_encoder", "lstm", params=RNN_PARAMS, context=("input_dim",))(
    lambda input_dim, **params: StackedRnn(input_dim, cell="lstm", **params))
register("seq2seq_encoder", "gru", params=RNN_PARAMS, context=("input_dim",))(
    lambda input_dim, **params: StackedRnn(input_dim, cell="gru", **params))
