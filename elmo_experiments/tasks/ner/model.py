"""BiLSTM-CRF sequence tagger (Lample et al. 2016; the ELMo paper's NER model)."""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.config.registry import Encoder, Probability, TokenEmbedders, register
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.tag_schemes import allowed_transitions, convert_tags, tags_to_spans
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.metrics.metric import Metric
from elmo_experiments.metrics.span_f1 import SpanF1
from elmo_experiments.modules.crf import ConditionalRandomField
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack


class CrfTagger(torch.nn.Module):
    """Embedder stack -> encoder -> dropout -> linear tag scores -> CRF (constrained Viterbi).

    An ``elmo`` embedder with two mixes adds its second one to the encoder output: [h; ELMo].
    It trains on ``label_encoding`` (BIOUL) tags but reports tags, span F1 and tag accuracy in
    the data's own scheme (``data_encoding``, IOB1 for CoNLL-2003), as conlleval does.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        encoder: Encoder,
        label_encoding: str | None,
        data_encoding: str | None = None,
        label_namespace: str = "labels",
        dropout: Probability = 0.5,
        constrain_crf_decoding: bool = True,
        include_start_end_transitions: bool = True,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.label_namespace = label_namespace
        self.label_encoding = label_encoding
        self.data_encoding = data_encoding or label_encoding
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()}
        )
        self.encoder = encoder.build(input_dim=self.embedder.output_dim)
        self.dropout = Dropout(dropout)
        labels = vocab.tokens(label_namespace)
        output_dim = self.encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo] if configured
        self.tag_projection = torch.nn.Linear(output_dim, len(labels))
        constraints = None
        if constrain_crf_decoding and label_encoding is not None:
            constraints = allowed_transitions(label_encoding, dict(enumerate(labels)))
        self.crf = ConditionalRandomField(len(labels), constraints, include_start_end_transitions)
        # with chunk labels conlleval's figures (its accuracy included), else tag accuracy
        self.span_f1 = SpanF1(iobes=self.data_encoding == "BIOUL") \
            if label_encoding is not None else None
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
        encoded = self.dropout(embedded.beside(encoded))
        logits = self.tag_projection(encoded)  # (batch, seq, num_tags)
        best = self.crf.viterbi_tags(logits, mask)
        output: dict[str, Any] = {"logits": logits, "predicted_ids": [path for path, _ in best]}
        if tags is not None:
            output["loss"] = -self.crf(logits, tags, mask) / mask.shape[0]  # mean over sentences
            self._update_metrics(output["predicted_ids"], tags, mask)
        return output


    def _update_metrics(self, predicted: list[list[int]], tags: torch.Tensor, mask: torch.Tensor):
        lengths = mask.sum(dim=1).tolist()
        gold_ids = [row[:n] for row, n in zip(tags.tolist(), lengths, strict=True)]
        if self.span_f1 is not None:
            self.span_f1.update([self.data_tags(self.decode_tags(g)) for g in gold_ids],
                                [self.data_tags(self.decode_tags(p)) for p in predicted])
            return
        for gold, guess in zip(gold_ids, predicted, strict=True):
            self.accuracy.add(sum(g == p for g, p in zip(gold, guess, strict=True)), len(gold))

    def decode_tags(self, ids: list[int]) -> list[str]:
        return [self.vocab.token(self.label_namespace, i) for i in ids]

    def data_tags(self, tags: list[str]) -> list[str]:
        """``tags`` (in ``label_encoding``) in the data's own scheme."""
        if self.label_encoding is None or self.data_encoding == self.label_encoding:
            return tags
        assert self.data_encoding is not None
        return convert_tags(tags, self.label_encoding, self.data_encoding)

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        """One JSON-able record per sentence: its tokens, predicted tags (in the data's scheme)
        and, for chunk tags, its spans, each with the CRF's probability of its tags."""
        records = []
        for row, (meta, ids) in enumerate(zip(batch.metadata, output["predicted_ids"],
                                              strict=True)):
            tags = self.decode_tags(ids)
            record: dict[str, Any] = {"tokens": meta["tokens"], "tags": self.data_tags(tags)}
            if self.label_encoding is not None:
                spans = tags_to_spans(tags, self.label_encoding)
                scores = self.crf.span_probabilities(
                    output["logits"][row, : len(ids)],
                    [(first, ids[first: last + 1]) for _, first, last in spans])
                record["spans"] = [
                    {"type": kind, "start": first, "end": last,
                     "text": " ".join(meta["tokens"][first: last + 1]), "score": round(score, 6)}
                    for (kind, first, last), score in zip(spans, scores, strict=True)]
            records.append(record)
        return records



register("model", "crf_tagger", context=("vocab", "label_encoding", "data_encoding"))(CrfTagger)
