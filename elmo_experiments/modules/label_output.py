"""The classification end shared by sentence-level models: loss, accuracy, readable output."""

from __future__ import annotations

from typing import Any

import torch

from elmo_experiments.data.batching import Batch
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy


class LabelOutput:
    """Turns class logits into the model output: probabilities, cross-entropy, accuracy."""

    def __init__(self, vocab: Vocabulary, namespace: str = "labels",
                 gold_field: str = "label") -> None:
        self.labels = vocab.tokens(namespace)
        self.gold_field = gold_field
        self.accuracy = CategoricalAccuracy()

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def output(self, logits: torch.Tensor, label: torch.Tensor | None,
               penalty: torch.Tensor | None = None) -> dict[str, Any]:
        """logits: (batch, classes); label: (batch,) gold ids or None; penalty: added to the
        loss (the task models leave theirs to the trainer: their modules' ``penalty()``)."""
        output: dict[str, Any] = {"logits": logits, "probabilities": torch.softmax(logits, -1)}
        if label is not None:
            loss = torch.nn.functional.cross_entropy(logits, label)  # mean over the batch
            output["loss"] = loss if penalty is None else loss + penalty
            self.accuracy.update(logits.detach(), label)
        return output

    def human_readable(self, output: dict[str, Any], batch: Batch,
                       text_fields: tuple[str, ...]) -> list[dict[str, Any]]:
        """Per instance: its text fields, the predicted label, every label's probability and
        the gold label when the input has one."""
        records = []
        for meta, probabilities in zip(batch.metadata, output["probabilities"].tolist(),
                                       strict=True):
            best = max(range(len(probabilities)), key=probabilities.__getitem__)
            record = {**{field: meta[field] for field in text_fields},
                      "label": self.labels[best],
                      "probabilities": dict(zip(self.labels, probabilities, strict=True))}
            if meta.get(self.gold_field) is not None:
                record["gold_label"] = meta[self.gold_field]
            records.append(record)
        return records

