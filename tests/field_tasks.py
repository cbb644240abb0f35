"""Test-only tasks that prove the span, per-token feature and document field kinds end to end
(reader -> fields -> Batch -> model -> metrics -> trainer), in the shapes SQuAD, SRL and
coreference need. Importing this module registers them; their data is made up by ``write_data``.

- ``test_spans``: pick the one span of a sentence that holds the token ``X`` (SQuAD's answer
  span); scored per batch and, from the predictions, by a dataset-level exact match.
- ``test_features``: tag each token with whether it follows the marked predicate (SRL's
  predicate indicator, a per-token tensor no indexer sees).
- ``test_documents``: label a document of sentences by its mentions (coreference's shape: a
  list of text plus spans into the document's tokens).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.config.registry import Param, Spec, register
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.fields import (
    LabelField,
    ListTextField,
    SequenceLabelField,
    SpanField,
    TensorField,
    TextField,
)
from elmo_experiments.data.files import iter_lines
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.modules.documents import document_tokens
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.encoders import StackedLstm
from elmo_experiments.modules.label_output import LabelOutput
from elmo_experiments.modules.pooling import masked_mean

WORDS = ["a", "b", "c", "d", "e", "f"]


def write_data(directory: Path, kind: str, count: int, seed: int) -> Path:
    """``count`` made-up instances of one task as JSON lines; returns the file."""
    rng = random.Random(seed)
    path = directory / f"{kind}_{seed}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(count):
            tokens = [rng.choice(WORDS) for _ in range(rng.randint(3, 8))]
            if kind == "spans":
                start = rng.randrange(len(tokens))
                end = min(len(tokens) - 1, start + rng.randint(0, 1))
                tokens[start] = "X"
                record: dict[str, Any] = {"tokens": tokens, "answer": [start, end]}
            elif kind == "features":
                predicate = rng.randrange(len(tokens))
                record = {"tokens": tokens,
                          "predicate": [int(i == predicate) for i in range(len(tokens))],
                          "tags": ["A" if i > predicate else "O" for i in range(len(tokens))]}
            else:
                sentences = [[rng.choice(WORDS) for _ in range(rng.randint(2, 5))]
                             for _ in range(rng.randint(1, 3))]
                flat = [t for sentence in sentences for t in sentence]
                position = rng.randrange(len(flat))
                label = rng.choice(["yes", "no"])
                flat[position] = "Y" if label == "yes" else "N"
                lengths = [len(s) for s in sentences]
                sentences = [flat[sum(lengths[:i]):sum(lengths[: i + 1])]
                             for i in range(len(lengths))]
                record = {"document": sentences, "mentions": [[position, position], [0, 0]],
                          "label": label}
            handle.write(json.dumps(record) + "\n")
    return path


class JsonLinesReader:
    """One JSON object per line; ``fields`` is the task's field declaration."""

    def __init__(self, token_indexers: dict[str, Spec], kind: str) -> None:
        self.token_indexers = {key: spec.build() for key, spec in token_indexers.items()}
        indexers = self.token_indexers
        self.fields: dict[str, Any] = {
            "spans": {"tokens": TextField(indexers), "answer": SpanField("tokens", target=True)},
            "features": {"tokens": TextField(indexers), "predicate": TensorField("tokens", "long"),
                         "tags": SequenceLabelField("tokens")},
            "documents": {"document": ListTextField(indexers),
                          "mentions": SpanField("document", many=True), "label": LabelField()},
        }[kind]

    def read(self, path: str | Path) -> list[dict[str, Any]]:
        return [json.loads(line) for _, line in iter_lines(path) if line.strip()]


for _kind in ("spans", "features", "documents"):
    register("dataset_reader", f"test_{_kind}",
             params=[Param("token_indexers", component="token_indexer", mapping=True)],
             )(lambda token_indexers, _kind=_kind: JsonLinesReader(token_indexers, _kind))


def _stack(vocab: Vocabulary, token_embedders: dict[str, Spec]) -> EmbedderStack:
    return EmbedderStack({key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})


class SpanPicker(torch.nn.Module):
    """Start and end scores per token; the best start and the best end at or after it."""

    def __init__(self, vocab: Vocabulary, token_embedders: dict[str, Spec]) -> None:
        super().__init__()
        self.embedder = _stack(vocab, token_embedders)
        self.scores = torch.nn.Linear(self.embedder.output_dim, 2)
        self.exact = CategoricalAccuracy()
        self.metrics = [self.exact]

    def forward(self, tokens: dict[str, torch.Tensor], mask: torch.Tensor,
                answer: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        logits = self.scores(self.embedder(tokens).input)  # (batch, seq, 2)
        logits = logits.masked_fill(~mask[..., None], -1e9)
        start_logits, end_logits = logits.unbind(-1)  # each (batch, seq)
        starts = start_logits.argmax(-1)  # (batch,)
        after = torch.arange(mask.shape[1])[None, :] >= starts[:, None]  # (batch, seq)
        ends = end_logits.masked_fill(~after, -1e9).argmax(-1)  # (batch,)
        output: dict[str, Any] = {"logits": logits, "spans": torch.stack([starts, ends], -1)}
        if answer is not None:  # (batch, 2)
            loss = torch.nn.functional.cross_entropy(start_logits, answer[:, 0])
            output["loss"] = loss + torch.nn.functional.cross_entropy(end_logits, answer[:, 1])
            self.exact.add((output["spans"] == answer).all(-1).sum().item(), len(answer))
        return output

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        return [{"tokens": meta["tokens"], "answer": span}
                for meta, span in zip(batch.metadata, output["spans"].tolist(), strict=True)]


class ExactMatch:
    """Dataset-level: the share of instances whose predicted span is the gold one."""

    names = ("exact_match",)

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        right = sum(list(i["answer"]) == list(p["answer"])
                    for i, p in zip(instances, predictions, strict=True))
        return {"exact_match": 100.0 * right / len(instances)}

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        Path(path).write_text(json.dumps([p["answer"] for p in predictions]))


class FeatureTagger(torch.nn.Module):
    """Tokens and a predicate indicator embedding -> a BiLSTM -> one tag per token."""

    def __init__(self, vocab: Vocabulary, token_embedders: dict[str, Spec]) -> None:
        super().__init__()
        self.vocab = vocab
        self.embedder = _stack(vocab, token_embedders)
        self.indicator = torch.nn.Embedding(2, 4)
        self.encoder = StackedLstm(self.embedder.output_dim + 4, [8], input_dropout=0.0)
        self.tags = torch.nn.Linear(16, vocab.size("labels"))
        self.accuracy = CategoricalAccuracy()
        self.metrics = [self.accuracy]

    def forward(self, tokens: dict[str, torch.Tensor], mask: torch.Tensor,
                predicate: torch.Tensor, tags: torch.Tensor | None = None,
                **_: Any) -> dict[str, Any]:
        joined = torch.cat([self.embedder(tokens).input, self.indicator(predicate)], -1)
        logits = self.tags(self.encoder(joined, mask))  # (batch, seq, tags)
        output: dict[str, Any] = {"logits": logits, "predicted": logits.argmax(-1)}
        if tags is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits[mask], tags[mask])
            self.accuracy.update(logits[mask], tags[mask])
        return output

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        return [{"tags": [self.vocab.token("labels", i) for i in row[: len(meta["tokens"])]]}
                for meta, row in zip(batch.metadata, output["predicted"].tolist(), strict=True)]


class DocumentClassifier(torch.nn.Module):
    """Embeds every sentence of a document, lays the document's tokens end to end, and labels
    it from the mean of its mentions' endpoint embeddings."""

    def __init__(self, vocab: Vocabulary, token_embedders: dict[str, Spec]) -> None:
        super().__init__()
        self.embedder = _stack(vocab, token_embedders)
        self.head = LabelOutput(vocab)
        self.classifier = torch.nn.Linear(self.embedder.output_dim, self.head.num_labels)
        self.metrics = [self.head.accuracy]

    def forward(self, document: dict[str, torch.Tensor], document_mask: torch.Tensor,
                mentions: torch.Tensor, mentions_mask: torch.Tensor,
                label: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        embedded = self.embedder(document).input  # (batch, sentences, tokens, dim)
        batch, _, _, dim = embedded.shape
        tokens = document_tokens(embedded, document_mask)  # (batch, document tokens, dim)
        ends = mentions.clamp(min=0)  # (batch, mentions, 2) positions in the document's tokens
        picked = tokens.gather(1, ends.reshape(batch, -1, 1).expand(-1, -1, dim))
        spans = picked.reshape(batch, -1, 2, dim).sum(2)  # (batch, mentions, dim)
        logits = self.classifier(masked_mean(spans, mentions_mask))  # (batch, labels)
        return self.head.output(logits, label)

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        return self.head.human_readable(output, batch, ("document",))


EMBEDDERS = [Param("token_embedders", component="token_embedder", mapping=True)]
register("model", "test_span_picker", params=EMBEDDERS, context=("vocab",))(SpanPicker)
register("model", "test_feature_tagger", params=EMBEDDERS, context=("vocab",))(FeatureTagger)
register("model", "test_document_classifier", params=EMBEDDERS,
         context=("vocab",))(DocumentClassifier)
register("dataset_metric", "test_exact_match", params=[])(ExactMatch)
