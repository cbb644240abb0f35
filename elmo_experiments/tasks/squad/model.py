"""Extractive reading comprehension (SQuAD): BiDAF (Seo et al. 2017) and, with a
self-attention block, the variant of Clark & Gardner (2017) that the ELMo paper builds on.

    tokens -> embedders [ELMo at the input] -> highway -> phrase encoder [; ELMo at its output]
      -> bidirectional attention: G = [c; c2q; c * c2q; c * q2c]
      -> (variant) linear + ReLU, then residual self-attention over the passage
      -> modelling encoder M -> start = w_s . [G; M]
      -> span-end encoder over [G; M] -> end = w_e . [G; M_end]
      -> the best span (start <= end, at most ``max_span_length`` tokens).

BiDAF: LSTMs, two highway layers, no projection, no self-attention. The paper's variant:
GRUs, no highway layers, ``attention_projection_dim`` (linear + ReLU after the attention) and a
``self_attention`` encoder. The two span layers read [G; M] in both (BiDAF's form), a
documented simplification of the variant's prediction layer.
"""

from __future__ import annotations

from typing import Annotated, Any

import torch

from elmo_experiments.config.registry import (
    AT_LEAST_ONE,
    Bounds,
    Component,
    Encoder,
    Probability,
    Size,
    Spec,
    TokenEmbedders,
    register,
)
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.modules.attention import TriLinearSimilarity, masked_softmax
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.highway import Highway
from elmo_experiments.modules.span_decoding import best_spans


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-softmax over the last dim with masked entries at -inf (so they get no mass)."""
    return torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


class SelfAttention(torch.nn.Module):
    """Clark & Gardner's residual block: x + ReLU(W [h; a; h * a]), h = encoder(x) and a its
    attention over the other passage positions (a token never attends to itself)."""

    def __init__(self, encoder: Spec, input_dim: int, dropout: float) -> None:
        super().__init__()
        self.encoder = encoder.build(input_dim=input_dim)
        dim = self.encoder.output_dim
        self.similarity = TriLinearSimilarity(dim)
        self.projection = torch.nn.Linear(3 * dim, input_dim)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # x: (batch, p, d); mask: (batch, p)
        h = self.encoder(x, mask)  # (batch, p, e)
        scores = self.similarity(h, h)  # (batch, p, p)
        seq = mask.shape[1]
        others = mask[:, None, :] & ~torch.eye(seq, dtype=torch.bool, device=mask.device)
        attended = masked_softmax(scores, others) @ h  # (batch, p, e)
        joined = self.dropout(torch.cat([h, attended, h * attended], dim=-1))
        return x + torch.relu(self.projection(joined))  # (batch, p, d)


class Bidaf(torch.nn.Module):
    """Scores every passage token as the answer's start and end; see the module docstring."""

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        phrase_encoder: Encoder,  # the contextual layer (ELMo's output placement joins its output)
        modeling_encoder: Encoder,
        span_end_encoder: Encoder,
        highway_layers: Annotated[int, Bounds(0, 10)] = 2,
        # linear + ReLU after the attention (Clark & Gardner); null: none (BiDAF)
        attention_projection_dim: Annotated[int | None, Bounds(*AT_LEAST_ONE)] = None,
        # the residual self-attention block's encoder (Clark & Gardner); null: none
        self_attention: Annotated[Spec | None, Component("seq2seq_encoder")] = None,
        dropout: Probability = 0.2,
        max_span_length: Size = 17,  # longest answer, in tokens, that decoding may pick
    ) -> None:
        super().__init__()
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})
        self.highway = Highway(self.embedder.output_dim, highway_layers)
        self.phrase_encoder = phrase_encoder.build(input_dim=self.embedder.output_dim)
        encoded = self.phrase_encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo]
        self.similarity = TriLinearSimilarity(encoded)
        merged = 4 * encoded
        self.projection: torch.nn.Module | None = None
        if attention_projection_dim is not None:
            self.projection = torch.nn.Sequential(
                torch.nn.Linear(merged, attention_projection_dim), torch.nn.ReLU())
            merged = attention_projection_dim
        self.self_attention = (SelfAttention(self_attention, merged, dropout)
                               if self_attention is not None else None)
        self.modeling_encoder = modeling_encoder.build(input_dim=merged)
        modeled = self.modeling_encoder.output_dim
        self.span_end_encoder = span_end_encoder.build(input_dim=merged + modeled)
        self.start_scorer = torch.nn.Linear(merged + modeled, 1)
        self.end_scorer = torch.nn.Linear(merged + self.span_end_encoder.output_dim, 1)
        self.dropout = Dropout(dropout)
        self.max_span_length = max_span_length
        self.start_accuracy = CategoricalAccuracy("start_accuracy")
        self.end_accuracy = CategoricalAccuracy("end_accuracy")
        self.span_accuracy = CategoricalAccuracy("span_accuracy")
        self.metrics = [self.start_accuracy, self.end_accuracy, self.span_accuracy]

    def _encode(self, tokens: dict[str, torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        embedded = self.embedder(tokens)  # input (batch, seq, emb); ELMo at the output, if any
        highway = self.highway(self.dropout(embedded.input))  # (batch, seq, emb)
        return embedded.beside(self.phrase_encoder(highway, mask))  # (batch, seq, enc)

    def _attend(self, passage: torch.Tensor, question: torch.Tensor, passage_mask: torch.Tensor,
                question_mask: torch.Tensor) -> torch.Tensor:
        """BiDAF's attention flow: (batch, p, 4 * enc)."""
        scores = self.similarity(passage, question)  # (batch, p, q)
        to_question = masked_softmax(scores, question_mask[:, None, :]) @ question  # (b, p, e)
        strongest = scores.masked_fill(~question_mask[:, None, :], float("-inf")).max(-1).values
        strongest = strongest.masked_fill(~passage_mask, float("-inf"))  # (batch, p)
        weights = masked_softmax(strongest, passage_mask)  # (batch, p)
        to_passage = (weights[:, None, :] @ passage).expand_as(passage)  # (batch, p, e)
        return torch.cat([passage, to_question, passage * to_question, passage * to_passage],
                         dim=-1)

    def forward(self, question: dict[str, torch.Tensor], passage: dict[str, torch.Tensor],
                question_mask: torch.Tensor, passage_mask: torch.Tensor,
                answer: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        encoded_q = self._encode(question, question_mask)  # (batch, q, enc)
        encoded_p = self._encode(passage, passage_mask)  # (batch, p, enc)
        merged = self._attend(encoded_p, encoded_q, passage_mask, question_mask)
        if self.projection is not None:
            merged = self.projection(self.dropout(merged))  # (batch, p, proj)
        if self.self_attention is not None:
            merged = self.self_attention(merged, passage_mask)
        modeled = self.modeling_encoder(merged, passage_mask)  # (batch, p, m)
        start_input = torch.cat([merged, modeled], dim=-1)
        start_logits = self.start_scorer(self.dropout(start_input)).squeeze(-1)  # (batch, p)
        end_states = self.span_end_encoder(start_input, passage_mask)  # (batch, p, s)
        end_input = torch.cat([merged, end_states], dim=-1)
        end_logits = self.end_scorer(self.dropout(end_input)).squeeze(-1)  # (batch, p)
        spans, _ = best_spans(start_logits.detach().float(), end_logits.detach().float(),
                              passage_mask, self.max_span_length)
        output: dict[str, Any] = {"start_logits": start_logits, "end_logits": end_logits,
                                  "best_span": spans}
        if answer is not None:  # (batch, 2) the gold span
            start_log = masked_log_softmax(start_logits.float(), passage_mask)
            end_log = masked_log_softmax(end_logits.float(), passage_mask)
            loss = -(start_log.gather(1, answer[:, :1]) + end_log.gather(1, answer[:, 1:]))
            output["loss"] = loss.mean()
            self.start_accuracy.add((spans[:, 0] == answer[:, 0]).sum().item(), len(answer))
            self.end_accuracy.add((spans[:, 1] == answer[:, 1]).sum().item(), len(answer))
            self.span_accuracy.add((spans == answer).all(-1).sum().item(), len(answer))
        return output


    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        """Per question: its id, the predicted token span and the passage text it covers."""
        records = []
        for meta, (start, end) in zip(batch.metadata, output["best_span"].tolist(), strict=True):
            offsets = meta["offsets"]
            text = meta["passage_text"][offsets[start][0]:offsets[end][1]]
            records.append({"id": meta["id"], "best_span": [start, end], "answer": text})
        return records


register("model", "bidaf", context=("vocab",))(Bidaf)
