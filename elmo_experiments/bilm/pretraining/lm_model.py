"""The joint forward + backward LM objective (Peters et al. 2018, §3.1) on the project's biLM.

The character token encoder and the softmax are shared by both directions; each direction has
its own LSTM stack. Training may sample the softmax; evaluation is always the exact softmax.
"""

from __future__ import annotations

from typing import Annotated, Any

import torch

from elmo_experiments.bilm.bidirectional_lm import BidirectionalLM, add_boundaries
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.pretraining.lm_data import SPECIALS
from elmo_experiments.bilm.pretraining.softmax import SharedSoftmax
from elmo_experiments.config.registry import (
    AT_LEAST_ONE,
    NON_NEGATIVE,
    Bounds,
    Param,
    Probability,
    positive,
    register,
)
from elmo_experiments.data.batching import Batch
from elmo_experiments.metrics.perplexity import Perplexity

BOS_ID, EOS_ID = SPECIALS.index("<S>"), SPECIALS.index("</S>")


class BilmLanguageModel(torch.nn.Module):
    """``loss`` = mean NLL of the forward LM + mean NLL of the backward LM."""

    def __init__(self, options: BilmOptions, vocab_size: int, dropout: float = 0.1,
                 num_samples: int = 0, seed: int = 0) -> None:
        super().__init__()
        self.bilm = BidirectionalLM(options)
        self.bilm.reset_parameters(torch.Generator().manual_seed(seed))
        self.bilm.dropout = dropout
        self.output_dropout = torch.nn.Dropout(dropout)
        self.softmax = SharedSoftmax(vocab_size, options.projection_dim, num_samples)
        with torch.no_grad():  # the seed fixes every initial weight, the softmax's too
            self.softmax.weight.normal_(0.0, options.projection_dim ** -0.5,
                                        generator=torch.Generator().manual_seed(seed + 1))
        self.perplexity = Perplexity()  # over the exact softmax only
        self.metrics = [self.perplexity]

    @staticmethod
    def lm_targets(targets: torch.Tensor, mask: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Targets at positions 0..seq of the boundary-added sentence, and their mask.

        Forward position k predicts token k + 1 (words, then </S>); backward position k + 1
        predicts token k (<S>, then words). Shapes (batch, seq + 1).
        """
        batch, seq = targets.shape
        lengths = mask.sum(dim=1)  # (batch,)
        valid = torch.arange(seq + 1, device=targets.device)[None, :] <= lengths[:, None]
        forward = torch.cat([targets, targets.new_zeros(batch, 1)], dim=1)
        forward[torch.arange(batch), lengths] = EOS_ID
        backward = torch.cat([targets.new_full((batch, 1), BOS_ID), targets], dim=1)
        return forward * valid, backward * valid, valid

    def forward(self, char_ids: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                **_: Any) -> dict[str, Any]:
        # char_ids: (batch, seq, 50); targets, mask: (batch, seq)
        seq = char_ids.shape[1]
        ids, lengths = add_boundaries(char_ids)
        run = self.bilm.encode(ids, lengths)
        forward_targets, backward_targets, valid = self.lm_targets(targets, mask)
        forward_hidden = self.output_dropout(run.forward[-1][:, : seq + 1][valid])  # (n, P)
        backward_hidden = self.output_dropout(run.backward[-1][:, 1 : seq + 2][valid])  # (n, P)
        # one softmax call for both directions (in training, one set of samples for both)
        n = forward_hidden.shape[0]
        nll = self.softmax(torch.cat([forward_hidden, backward_hidden]),
                           torch.cat([forward_targets[valid], backward_targets[valid]]))  # (2n,)
        forward_nll, backward_nll = nll[:n], nll[n:]
        if not self.softmax.training or self.softmax.num_samples == 0:
            self.perplexity.update(float(forward_nll.detach().sum()),
                                   float(backward_nll.detach().sum()), int(valid.sum()))
        return {"loss": forward_nll.mean() + backward_nll.mean()}

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict]:
        return [{} for _ in batch.indices]


def filters_problem(value: Any) -> str | None:
    """A ``Param.check``: the char CNN's filters, a non-empty list of [width, count] pairs of
    positive integers."""
    if value and all(isinstance(f, list) and len(f) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in f) for f in value):
        return None
    return f"expected a list of [width, count] pairs of positive integers, got {value!r}"


ARCHITECTURE_PARAMS = [
    Param("cell_dim", int, bounds=AT_LEAST_ONE), Param("projection_dim", int, bounds=AT_LEAST_ONE),
    Param("n_layers", int, 2, bounds=AT_LEAST_ONE),
    Param("cell_clip", float, 3.0, check=positive), Param("proj_clip", float, 3.0, check=positive),
    Param("use_skip_connections", bool, True),
    Param("char_embedding_dim", int, 16, bounds=AT_LEAST_ONE),
    Param("filters", list, [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
          check=filters_problem),
    Param("n_highway", int, 2, bounds=NON_NEGATIVE),
    Param("activation", str, "relu", choices=("relu", "tanh")),
]


@register("model", "bilm_lm", context=("vocab_size", "seed"), params=ARCHITECTURE_PARAMS)
def bilm_lm(vocab_size: int, seed: int, dropout: Probability = 0.1,
            num_samples: Annotated[int, Bounds(*NON_NEGATIVE)] = 8192,
            **architecture: Any) -> BilmLanguageModel:
    """A biLM language model built from options in the released ``options.json`` terms;
    ``num_samples``: the sampled softmax's size in training (0: the exact softmax)."""
    architecture["filters"] = tuple((int(w), int(n)) for w, n in architecture["filters"])
    return BilmLanguageModel(BilmOptions(**architecture), vocab_size, dropout, num_samples, seed)
