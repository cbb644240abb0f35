"""BiLSTM-CRF sequence tagger (Lample et al. 2016; the ELMo paper's NER model)."""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.config.registry import PROBABILITY, Param, Spec, register
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.tag_schemes import allowed_transitions
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.metrics.metric import Metric
from elmo_experiments.metrics.span_f1 import SpanF1
from elmo_experiments.modules.crf import ConditionalRandomField
from elmo_experiments.modules.embedders.stack import EmbedderStack


class CrfTagger(torch.nn.Module):
    """Embedder stack -> encoder -> dropout -> linear tag scores -> CRF (constrained Viterbi).

    An ``elmo`` embedder with two mixes adds its second one to the encoder output: [h; ELMo].
    """

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: dict[str, Spec],
        encoder: Spec,
        label_encoding: str | None,
        label_namespace: str = "labels",
        dropout: float = 0.5,
        constrain_crf_decoding: bool = True,
        include_start_end_transitions: bool = True,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.label_namespace = label_namespace
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()}
        )
        self.encoder = encoder.build(input_dim=self.embedder.output_dim)
        self.dropout = torch.nn.Dropout(dropout)
        labels = vocab.tokens(label_namespace)
        output_dim = self.encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo] if configured
        self.tag_projection = torch.nn.Linear(output_dim, len(labels))
        constraints = None
        if constrain_crf_decoding and label_encoding is not None:
            constraints = allowed_transitions(label_encoding, dict(enumerate(labels)))
        self.crf = ConditionalRandomField(len(labels), constraints, include_start_end_transitions)
        # with chunk labels conlleval's figures (its accuracy included), else tag accuracy
        self.span_f1 = SpanF1() if label_encoding is not None else None
        self.accuracy = CategoricalAccuracy()
        self.metrics: list[Metric] = [self.span_f1] if self.span_f1 else [self.accuracy]

    def forward(
        self,
        tokens: dict[str, torch.Tensor],
        mask: torch.Tensor,
        tags: torch.Tensor | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        embedded = self.embedder(tokens)  # input (batch, seq, embed_dim); ELMo at the output
        encoded = self.encoder(embedded.input, mask)  # (batch, seq, enc_dim)
        extra = embedded.extra
        encoded = self.dropout(torch.cat([encoded, *extra], dim=-1) if extra else encoded)
        logits = self.tag_projection(encoded)  # (batch, seq, num_tags)
        best = self.crf.viterbi_tags(logits, mask)
        output: dict[str, Any] = {"logits": logits, "predicted_ids": [path for path, _ in best]}
        if tags is not None:
            loss = -self.crf(logits, tags, mask) / mask.shape[0]  # mean over sentences
            penalty = self.embedder.regularization_penalty()
            output["loss"] = loss if penalty is None else loss + penalty
            self._update_metrics(output["predicted_ids"], tags, mask)
        return output

    def _update_metrics(self, predicted: list[list[int]], tags: torch.Tensor, mask: torch.Tensor):
        lengths = mask.sum(dim=1).tolist()
        gold_ids = [row[:n] for row, n in zip(tags.tolist(), lengths, strict=True)]
        if self.span_f1 is not None:
            self.span_f1.update(
                [self.decode_tags(g) for g in gold_ids], [self.decode_tags(p) for p in predicted]
            )
            return
        for gold, guess in zip(gold_ids, predicted, strict=True):
            self.accuracy.add(sum(g == p for g, p in zip(gold, guess, strict=True)), len(gold))

    def decode_tags(self, ids: list[int]) -> list[str]:
        return [self.vocab.token(self.label_namespace, i) for i in ids]

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        """One JSON-able record per sentence: its tokens and predicted tags."""
        return [
            {"tokens": meta["tokens"], "tags": self.decode_tags(ids)}
            for meta, ids in zip(batch.metadata, output["predicted_ids"], strict=True)
        ]



register(
    "model",
    "crf_tagger",
    params=[
        Param("token_embedders", component="token_embedder", mapping=True),
        Param("encoder", component="seq2seq_encoder"),
        Param("label_namespace", str, "labels"),
        Param("dropout", float, 0.5, bounds=PROBABILITY),
        Param("constrain_crf_decoding", bool, True),
        Param("include_start_end_transitions", bool, True),
    ],
    context=("vocab", "label_encoding"),
)(CrfTagger)
