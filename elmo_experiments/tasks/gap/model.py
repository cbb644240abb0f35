"""GAP as span-pair scoring over the coreference model's span representations (Lee et al.
2017; ``modules/spans.py``, shared with ``tasks/coref``)::

    the text: embedders [ELMo at the input] -> lexical dropout
      -> the context encoder (a BiLSTM over the text) [; ELMo at its output]
    the pronoun P and the names A and B (token spans given by the data):
      g = [x_start; x_end; attention-weighted head of its token embeddings; width feature]
    s(P, X) = FFNN([g_P; g_X; g_P * g_X; distance bucket; X before or after P]) for X = A, B
    three-way softmax over [s(P, A), s(P, B), 0] (the 0: neither name, as coreference's
    dummy antecedent); cross-entropy on the gold (A, B or neither)
    decoding: the argmax; A-coref is "argmax = A", B-coref "argmax = B"

A name wider than ``max_span_width`` tokens is represented by its last ``max_span_width``
tokens (a name's head is its end).
"""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.config.registry import (
    Encoder,
    Probability,
    Size,
    TokenEmbedders,
    Widths,
    register,
)
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.feedforward import FeedForward
from elmo_experiments.modules.spans import (
    DISTANCE_BUCKETS,
    SpanRepresentation,
    distance_buckets,
)

CLASSES = ("A", "B", "neither")


def gold_classes(metadata: list[dict[str, Any]], device: torch.device) -> torch.Tensor | None:
    """(batch,) class indices into ``CLASSES``; None unless every instance is labelled."""
    if not metadata or any(m.get("a_coref") is None or m.get("b_coref") is None
                           for m in metadata):
        return None
    return torch.tensor([0 if m["a_coref"] else 1 if m["b_coref"] else 2 for m in metadata],
                        dtype=torch.long, device=device)


class PronounResolver(torch.nn.Module):
    """Scores a pronoun against two candidate names; see the module docstring."""

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        context_encoder: Encoder,
        feedforward_dims: Widths = (150, 150),  # the pair scorer's
        feature_size: Size = 20,
        max_span_width: Size = 10,  # a wider name is represented by its last this many tokens
        lexical_dropout: Probability = 0.5,  # on the token embeddings (ELMo included)
        dropout: Probability = 0.2,  # in the scorer
    ) -> None:
        super().__init__()
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})
        embedded = self.embedder.output_dim
        self.context_encoder = context_encoder.build(input_dim=embedded)
        encoded = self.context_encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo]
        self.lexical_dropout = Dropout(lexical_dropout)
        self.spans = SpanRepresentation(encoded, embedded, max_span_width, feature_size)
        self.distance_embedding = torch.nn.Embedding(DISTANCE_BUCKETS, feature_size)
        self.order_embedding = torch.nn.Embedding(2, feature_size)  # the name before P, after
        self.pair_scorer = torch.nn.Sequential(
            FeedForward(3 * self.spans.output_dim + 2 * feature_size, list(feedforward_dims),
                        "relu", dropout),
            torch.nn.Linear(feedforward_dims[-1], 1))
        self.max_span_width = max_span_width
        self.accuracy = CategoricalAccuracy("accuracy")
        self.metrics = [self.accuracy]

    def _narrowed(self, span: torch.Tensor) -> torch.Tensor:
        """(batch, 2) spans, at most ``max_span_width`` tokens: a longer one keeps its end."""
        start = torch.maximum(span[:, 0], span[:, 1] - (self.max_span_width - 1))
        return torch.stack([start, span[:, 1]], dim=-1)

    def forward(self, text: dict[str, torch.Tensor], text_mask: torch.Tensor,
                pronoun: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
                metadata: list[dict[str, Any]] | None = None, **_: Any) -> dict[str, Any]:
        embedded = self.embedder(text)  # input (batch, T, d); ELMo at the output, if any
        words = self.lexical_dropout(embedded.input)
        encoded = embedded.beside(self.context_encoder(words, text_mask))  # (batch, T, e)
        spans = torch.stack([self._narrowed(s) for s in (pronoun, a, b)], dim=1)  # (b, 3, 2)
        g = self.spans(encoded, words, spans)  # (batch, 3, g)
        own, names = g[:, :1].expand(-1, 2, -1), g[:, 1:]  # (batch, 2, g) each
        starts = spans[..., 0]  # (batch, 3)
        distance = (starts[:, 1:] - starts[:, :1]).abs()  # (batch, 2)
        after = (starts[:, 1:] > starts[:, :1]).long()
        pairs = torch.cat([own, names, own * names,
                           self.distance_embedding(distance_buckets(distance)),
                           self.order_embedding(after)], dim=-1)
        scores = self.pair_scorer(pairs).squeeze(-1)  # (batch, 2)
        logits = torch.cat([scores, scores.new_zeros(scores.shape[0], 1)], dim=-1)
        output: dict[str, Any] = {"logits": logits,
                                  "probabilities": torch.softmax(logits, dim=-1)}
        gold = gold_classes(metadata or [], logits.device)
        if gold is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, gold)
            self.accuracy.add((logits.argmax(-1) == gold).sum().item(), len(gold))
        return output


    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        """Per example: its ID, the two decisions (what the official scorer reads), each
        class's probability, and the three mentions as the data names them."""
        records = []
        for row, meta in enumerate(batch.metadata):
            probabilities = output["probabilities"][row].tolist()
            best = max(range(len(CLASSES)), key=probabilities.__getitem__)
            records.append({"id": meta.get("id"), "a_coref": best == 0, "b_coref": best == 1,
                            "probabilities": dict(zip(CLASSES, probabilities, strict=True)),
                            "mentions": meta.get("mentions")})
        return records


register("model", "gap_pronoun", context=("vocab",))(PronounResolver)
