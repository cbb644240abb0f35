"""Enhanced sequential inference model (Chen et al. 2017) for natural language inference.

ELMo may enter at the input (the embedder's first mix) and at the output of the encoding
BiLSTM, the lowest one (its second mix), as in the paper's best SNLI setting.
"""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.config.registry import (
    Encoder,
    Probability,
    Size,
    TokenEmbedders,
    register,
)
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.modules.attention import align
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.feedforward import FeedForward
from elmo_experiments.modules.label_output import LabelOutput
from elmo_experiments.modules.pooling import masked_max, masked_mean


class Esim(torch.nn.Module):
    """encode both sentences (BiLSTM [; ELMo]) -> soft alignment -> [a; b; a-b; a*b] ->
    ReLU projection -> composition BiLSTM -> mean+max pools of both -> MLP -> classes.

    The 50% variational dropout on the LSTM inputs is the encoders' ``input_dropout``.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        *,
        encoder: Encoder,
        projection_dim: Size = 300,
        inference_encoder: Encoder,
        output_dim: Size = 300,
        dropout: Probability = 0.5,  # on the pooled vector and the MLP's hidden layer
        attention_dropout: Probability = 0.0,  # after the attention (paper, ELMo: 0.5)
        weight_l2: float = 0.0,  # L2 on the task model's weight matrices
    ) -> None:
        super().__init__()
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})
        self.encoder = encoder.build(input_dim=self.embedder.output_dim)
        encoded_dim = self.encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo]
        self.attention_dropout = Dropout(attention_dropout)
        self.projection = FeedForward(4 * encoded_dim, [projection_dim], "relu")
        self.inference_encoder = inference_encoder.build(input_dim=projection_dim)
        self.output_dropout = Dropout(dropout)
        self.head = LabelOutput(vocab)
        self.metrics = [self.head.accuracy]
        self.output_layer = FeedForward(4 * self.inference_encoder.output_dim, [output_dim],
                                        "relu", dropout)
        self.classifier = torch.nn.Linear(output_dim, self.head.num_labels)
        self.weight_l2 = weight_l2
        # the task model's weight matrices, collected once (the embedders' are not included)
        self._matrices = [p for name, p in self.named_parameters()
                          if p.requires_grad and p.dim() >= 2 and not name.startswith("embedder.")]

    def _encode(self, tokens: dict[str, torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        embedded = self.embedder(tokens)  # this sentence's input and its output ELMo, if any
        encoded = self.encoder(embedded.input, mask)  # (batch, seq, enc)
        return embedded.beside(encoded)

    def _compose(self, encoded: torch.Tensor, aligned: torch.Tensor,
                 mask: torch.Tensor) -> torch.Tensor:
        enhanced = torch.cat([encoded, aligned, encoded - aligned, encoded * aligned], dim=-1)
        projected = self.projection(self.attention_dropout(enhanced))  # (batch, seq, proj)
        composed = self.inference_encoder(projected, mask)  # (batch, seq, inf)
        return torch.cat([masked_mean(composed, mask), masked_max(composed, mask)], dim=-1)

    def penalty(self) -> torch.Tensor | None:
        """weight_l2 · Σ||W||² over the task model's weight matrices (not the embedders'): the
        model's own term of the objective's penalty (``contracts.regularization_penalty``)."""
        if not self.weight_l2:
            return None
        return self.weight_l2 * torch.stack([p.pow(2).sum() for p in self._matrices]).sum()

    def forward(self, premise: dict[str, torch.Tensor], hypothesis: dict[str, torch.Tensor],
                premise_mask: torch.Tensor, hypothesis_mask: torch.Tensor,
                label: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        encoded_p = self._encode(premise, premise_mask)  # (batch, p, d)
        encoded_h = self._encode(hypothesis, hypothesis_mask)  # (batch, h, d)
        aligned_h = align(encoded_p, encoded_h, hypothesis_mask)  # (batch, p, d)
        aligned_p = align(encoded_h, encoded_p, premise_mask)  # (batch, h, d)
        pooled = torch.cat([self._compose(encoded_p, aligned_h, premise_mask),
                            self._compose(encoded_h, aligned_p, hypothesis_mask)], dim=-1)
        logits = self.classifier(self.output_layer(self.output_dropout(pooled)))  # (batch, 3)
        return self.head.output(logits, label)

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict]:
        return self.head.human_readable(output, batch, ("premise", "hypothesis"))



register("model", "esim", context=("vocab",))(Esim)
