"""Sequence encoders: stacked BiLSTMs with variational dropout on every layer's input."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from elmo_experiments.config.registry import Param, register
from elmo_experiments.modules.dropout import VariationalDropout


class StackedLstm(torch.nn.Module):
    """LSTM layers of possibly different sizes (e.g. 200 then 100), each bidirectional.

    Padding never leaks into the backward direction: sequences are packed by length.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_sizes: list[int],
        bidirectional: bool = True,
        input_dropout: float = 0.5,
    ) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList()
        size = input_dim
        for hidden in hidden_sizes:
            self.layers.append(
                torch.nn.LSTM(size, hidden, batch_first=True, bidirectional=bidirectional)
            )
            size = hidden * (2 if bidirectional else 1)
        self.dropout = VariationalDropout(input_dropout)
        self.output_dim = size

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # inputs: (batch, seq, input_dim); mask: (batch, seq)
        lengths = mask.sum(dim=1).cpu()
        output = inputs
        for lstm in self.layers:
            packed = pack_padded_sequence(
                self.dropout(output), lengths, batch_first=True, enforce_sorted=False
            )
            encoded, _ = lstm(packed)
            output, _ = pad_packed_sequence(encoded, batch_first=True, total_length=mask.shape[1])
        return output  # (batch, seq, output_dim)


register(
    "seq2seq_encoder",
    "lstm",
    params=[
        Param("hidden_sizes", list),
        Param("bidirectional", bool, True),
        Param("input_dropout", float, 0.5),
    ],
    context=("input_dim",),
)(StackedLstm)
