"""Semantic role labelling as BIO tagging, one predicate at a time (He et al. 2017; the ELMo
paper's SRL model).

    tokens -> embedders [ELMo at the input] ; predicate-indicator embedding
      -> the encoder (an alternating highway LSTM) [; ELMo at its output]
      -> linear tag scores -> softmax (trained per token)
      -> at evaluation, Viterbi decoding restricted to valid BIO sequences (an ``I-X`` only
         after ``B-X`` or ``I-X``), over the tags' log-probabilities.
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
from elmo_experiments.data.tag_schemes import allowed_transitions
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.span_f1 import SpanF1
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.viterbi import constraint_potentials, viterbi_decode


class SrlTagger(torch.nn.Module):
    """Tags every token with its BIO role label for the instance's predicate."""

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        encoder: Encoder,
        predicate_embedding_dim: Size = 100,
        label_namespace: str = "labels",
        dropout: Probability = 0.0,  # before the tag projection
        # decode valid BIO sequences only (Viterbi); false: each token's best tag
        constrain_decoding: bool = True,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.label_namespace = label_namespace
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})
        self.predicate_embedding = torch.nn.Embedding(2, predicate_embedding_dim)
        self.encoder = encoder.build(input_dim=self.embedder.output_dim + predicate_embedding_dim)
        labels = vocab.tokens(label_namespace)
        output_dim = self.encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo]
        self.tag_projection = torch.nn.Linear(output_dim, len(labels))
        self.dropout = Dropout(dropout)
        constraints = (allowed_transitions("BIO", dict(enumerate(labels)))
                       if constrain_decoding else
                       [(i, j) for i in range(len(labels) + 1) for j in range(len(labels) + 2)])
        for name, tensor in zip(("transitions", "start", "end"),
                                constraint_potentials(len(labels), constraints), strict=True):
            self.register_buffer(f"_{name}", tensor, persistent=False)
        # streamed, per predicate (C-X not joined here; srl_eval does that): span F1 and the
        # tag accuracy, as conlleval counts them
        self.span_f1 = SpanF1(iobes=False)
        self.metrics = [self.span_f1]

    def forward(self, tokens: dict[str, torch.Tensor], mask: torch.Tensor,
                predicate: torch.Tensor, tags: torch.Tensor | None = None,
                **_: Any) -> dict[str, Any]:
        embedded = self.embedder(tokens)  # input (batch, seq, emb); ELMo at the output, if any
        joined = torch.cat([embedded.input, self.predicate_embedding(predicate)], dim=-1)
        encoded = embedded.beside(self.encoder(joined, mask))  # (batch, seq, enc)
        logits = self.tag_projection(self.dropout(encoded))  # (batch, seq, tags)
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        best = viterbi_decode(log_probs.detach(), mask, self._transitions, self._start,
                              self._end)
        output: dict[str, Any] = {"logits": logits, "predicted_ids": [p for p, _ in best]}
        if tags is not None:
            output["loss"] = torch.nn.functional.nll_loss(log_probs[mask], tags[mask])  # per token
            lengths = mask.sum(dim=1).tolist()
            gold = [self.decode_tags(row[:n]) for row, n in zip(tags.tolist(), lengths,
                                                                  strict=True)]
            guess = [self.decode_tags(path) for path in output["predicted_ids"]]
            self.span_f1.update(gold, guess)
        return output


    def decode_tags(self, ids: list[int]) -> list[str]:
        return [self.vocab.token(self.label_namespace, i) for i in ids]

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        """Per predicate: the sentence's tokens, the predicate's position, the BIO tags."""
        return [{"tokens": meta["tokens"], "predicate_index": meta.get("predicate_index"),
                 "tags": self.decode_tags(ids)}
                for meta, ids in zip(batch.metadata, output["predicted_ids"], strict=True)]


register("model", "srl_tagger", context=("vocab",))(SrlTagger)
