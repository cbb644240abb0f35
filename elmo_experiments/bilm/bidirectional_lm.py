"""The biLM: token layer from characters, then forward and backward stacks of projected LSTMs."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from elmo_experiments.bilm.char_encoder import CharacterEncoder
from elmo_experiments.bilm.characters import BOS_IDS, EOS_IDS
from elmo_experiments.bilm.lstm import LstmState, ProjectedLstm
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.modules.encoders import reverse_padded

States = list[LstmState]  # forward layers then backward layers


@dataclass
class BilmStates:
    """Per-layer activations of a batch *with* boundaries (what LM training needs)."""

    token: torch.Tensor  # (batch, seq + 2, P)
    forward: list[torch.Tensor]  # L x (batch, seq + 2, P)
    backward: list[torch.Tensor]  # L x (batch, seq + 2, P)
    lengths: torch.Tensor  # (batch,) including the two boundaries
    final: States


def add_boundaries(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Insert BOS/EOS ids around each sentence: (batch, seq, 50) -> (batch, seq + 2, 50)."""
    mask = (ids > 0).any(dim=2)  # (batch, seq)
    lengths = mask.sum(dim=1)  # (batch,)
    batch, seq, width = ids.shape
    out = ids.new_zeros(batch, seq + 2, width)
    out[:, 1 : seq + 1] = ids
    out[:, 0] = torch.as_tensor(BOS_IDS, device=ids.device)
    out[torch.arange(batch), lengths + 1] = torch.as_tensor(EOS_IDS, device=ids.device)
    return out, lengths + 2


class BidirectionalLM(torch.nn.Module):
    """Char CNN token layer shared by two directions; each direction has its own LSTM stack."""

    def __init__(self, options: BilmOptions) -> None:
        super().__init__()
        self.options = options
        self.char_encoder = CharacterEncoder(options)
        p, c = options.projection_dim, options.cell_dim

        def stack() -> torch.nn.ModuleList:
            return torch.nn.ModuleList(
                ProjectedLstm(p, c, p, options.cell_clip, options.proj_clip)
                for _ in range(options.n_layers))

        self.forward_layers = stack()
        self.backward_layers = stack()
        self.output_dim = 2 * p
        self.num_layers = options.n_layers + 1
        self.dropout = 0.0  # on every LSTM layer's input, in training mode (LM pretraining)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.char_encoder.reset_parameters(generator)
        for layer in [*self.forward_layers, *self.backward_layers]:
            layer.reset_parameters(generator)

    def _direction(self, layers: torch.nn.ModuleList, inputs: torch.Tensor, lengths: torch.Tensor,
                   states: list[LstmState | None]) -> tuple[list[torch.Tensor], States]:
        outputs, finals = [], []
        x = inputs
        for index, (layer, state) in enumerate(zip(layers, states, strict=True)):
            dropped = torch.nn.functional.dropout(x, self.dropout, self.training)
            h, final = layer(dropped, lengths, state)  # (batch, seq, P)
            if index > 0 and self.options.use_skip_connections:
                h = h + x  # residual after the recurrence
            outputs.append(h)
            finals.append(final)
            x = h
        return outputs, finals

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor,
               states: list[LstmState | None] | None = None) -> BilmStates:
        """Run on ids that already contain BOS/EOS; ``lengths`` count them."""
        n = self.options.n_layers
        states = states or [None] * (2 * n)
        mask = (torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None])
        token = self.char_encoder(ids)  # (batch, seq2, P)
        forward, forward_final = self._direction(self.forward_layers, token, lengths, states[:n])
        backward_rev, backward_final = self._direction(
            self.backward_layers, reverse_padded(token, lengths), lengths, states[n:])
        backward = [reverse_padded(h, lengths) * mask[:, :, None] for h in backward_rev]
        return BilmStates(token, forward, backward, lengths, forward_final + backward_final)

    def layers_with_boundaries(
        self, char_ids: torch.Tensor, states: list[LstmState | None] | None = None
    ) -> tuple[list[torch.Tensor], torch.Tensor, States]:
        """ELMo layers *with* BOS/EOS: (L+1) x (batch, seq + 2, 2P), their mask, final states.

        Layer 0 is the token layer duplicated; layer l is [forward; backward] of LSTM layer l.
        Mixing (and layer norm) happens on these; boundaries are dropped afterwards.
        """
        ids, lengths = add_boundaries(char_ids)
        run = self.encode(ids, lengths, states)
        mask = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None]
        keep = mask[:, :, None].to(run.token.dtype)
        layers = [torch.cat([run.token, run.token], dim=2)]
        layers += [torch.cat(pair, dim=2) for pair in zip(run.forward, run.backward, strict=True)]
        return [layer * keep for layer in layers], mask, run.final

    def forward(self, char_ids: torch.Tensor, states: list[LstmState | None] | None = None
                ) -> tuple[list[torch.Tensor], torch.Tensor, States]:
        """ELMo layers for ids without boundaries: (L+1) x (batch, seq, 2P), mask, final states."""
        layers, mask, final = self.layers_with_boundaries(char_ids, states)
        return [remove_boundaries(layer, mask) for layer in layers], (char_ids > 0).any(2), final


def remove_boundaries(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Drop BOS/EOS from right-padded (batch, seq + 2, dim); padding comes out zero."""
    seq = tensor.shape[1] - 2
    lengths = mask.sum(dim=1) - 2  # (batch,)
    keep = torch.arange(seq, device=tensor.device)[None, :] < lengths[:, None]
    return tensor[:, 1 : seq + 1] * keep[:, :, None].to(tensor.dtype)  # (batch, seq, dim)
