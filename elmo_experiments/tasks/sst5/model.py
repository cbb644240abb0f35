"""Biattentive classification network (McCann et al. 2017) in the ELMo paper's variant.

The final maxout network is replaced by a feed-forward of ReLU layers with dropout; ELMo may
enter at the input (the embedder's first mix) and at the integrator's output (its second mix).
"""

from __future__ import annotations

from typing import Annotated, Any

import torch

from elmo_experiments.config.registry import (
    PROBABILITY,
    Bounds,
    Encoder,
    Probability,
    Size,
    TokenEmbedders,
    Widths,
    register,
)
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.modules.attention import align
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.feedforward import FeedForward
from elmo_experiments.modules.label_output import LabelOutput
from elmo_experiments.modules.pooling import (
    SelfAttentivePooling,
    masked_max,
    masked_mean,
    masked_min,
)


class Bcn(torch.nn.Module):
    """embed -> ReLU feed-forward -> BiLSTM encoder -> self biattention [x; x-c; x*c] ->
    BiLSTM integrator [-> ; ELMo] -> max/min/mean/self-attentive pools -> feed-forward -> classes.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        *,
        pre_encode_dim: Size = 300,  # width of the ReLU layer before the encoder
        encoder: Encoder,
        integrator: Encoder,
        output_dims: Widths = (1200, 600),  # the ReLU layers before the class scores
        embedding_dropout: Probability = 0.5,
        pre_encode_dropout: Probability = 0.25,
        integrator_dropout: Probability = 0.1,  # on the pooled vector
        # one value or one per output layer
        output_dropout: Annotated[float | list[float], Bounds(*PROBABILITY)] = 0.2,
    ) -> None:
        super().__init__()
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})
        self.embedding_dropout = Dropout(embedding_dropout)
        self.pre_encode = FeedForward(self.embedder.output_dim, [pre_encode_dim], "relu",
                                      pre_encode_dropout)
        self.encoder = encoder.build(input_dim=pre_encode_dim)
        self.integrator = integrator.build(input_dim=3 * self.encoder.output_dim)
        pooled_dim = self.integrator.output_dim + self.embedder.extra_dim()  # [h; ELMo]
        self.integrator_dropout = Dropout(integrator_dropout)
        self.self_attentive_pool = SelfAttentivePooling(pooled_dim)
        self.head = LabelOutput(vocab)
        self.metrics = [self.head.accuracy]
        self.output_layer = FeedForward(4 * pooled_dim, list(output_dims), "relu", output_dropout)
        self.classifier = torch.nn.Linear(self.output_layer.output_dim, self.head.num_labels)

    def forward(self, tokens: dict[str, torch.Tensor], mask: torch.Tensor,
                label: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        embedded = self.embedder(tokens)  # input (batch, seq, embed_dim); ELMo at the output
        encoded = self.encoder(self.pre_encode(self.embedding_dropout(embedded.input)), mask)
        attended = align(encoded, encoded, mask)  # (batch, seq, enc): the sentence on itself
        integrated = self.integrator(
            torch.cat([encoded, encoded - attended, encoded * attended], dim=-1), mask)
        integrated = embedded.beside(integrated)
        pooled = torch.cat([masked_max(integrated, mask), masked_min(integrated, mask),
                            masked_mean(integrated, mask),
                            self.self_attentive_pool(integrated, mask)], dim=-1)  # (batch, 4d)
        logits = self.classifier(self.output_layer(self.integrator_dropout(pooled)))
        return self.head.output(logits, label)


    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict]:
        return self.head.human_readable(output, batch, ("tokens",))



register("model", "bcn", context=("vocab",))(Bcn)
