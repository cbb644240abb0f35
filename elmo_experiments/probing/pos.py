"""Table 6: a linear POS classifier on each frozen biLM layer.

Softmax regression on one layer's vectors, trained with Adam on the training split, the epoch
with the best dev accuracy kept (early stop after ``patience`` epochs without a gain).
Accuracy is the percentage of tokens whose predicted tag is the gold tag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from elmo_experiments.probing.activations import Activations, encode, load_runner
from elmo_experiments.probing.pos_data import Tagged


@dataclass
class ProbeSettings:
    """Training settings of the linear classifier."""

    epochs: int = 10
    batch_size: int = 256
    lr: float = 5e-3
    patience: int = 2
    seed: int = 0


def _tag_ids(splits: dict[str, Tagged]) -> tuple[list[str], dict[str, np.ndarray]]:
    """Tag vocabulary from train (sorted) and each split's tag ids (-1: a tag unseen in train)."""
    tags = sorted({t for _, sentence_tags in splits["train"] for t in sentence_tags})
    index = {t: i for i, t in enumerate(tags)}
    ids = {name: np.array([index.get(t, -1) for _, ts in data for t in ts], dtype=np.int64)
           for name, data in splits.items()}
    return tags, ids


def _accuracy(model: torch.nn.Module, vectors: np.ndarray, gold: np.ndarray,
              batch_size: int = 4096) -> tuple[float, int]:
    """(accuracy in percent, correct count); unseen gold tags (-1) count as wrong."""
    correct = 0
    with torch.no_grad():
        for start in range(0, len(gold), batch_size):
            x = torch.from_numpy(vectors[start: start + batch_size].astype(np.float32))
            predicted = model(x).argmax(dim=1).numpy()  # (batch,)
            correct += int((predicted == gold[start: start + batch_size]).sum())
    return 100.0 * correct / max(len(gold), 1), correct


def train_linear(train_x: np.ndarray, train_y: np.ndarray, dev_x: np.ndarray,
                 dev_y: np.ndarray, num_tags: int, settings: ProbeSettings
                 ) -> tuple[torch.nn.Linear, int]:
    """The classifier of the best dev epoch and that epoch (1-based); deterministic in seed."""
    generator = torch.Generator().manual_seed(settings.seed)
    torch.manual_seed(settings.seed)
    model = torch.nn.Linear(train_x.shape[1], num_tags)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    best_state = {k: v.clone() for k, v in model.state_dict().items()}
    best_acc, best_epoch, waited = -1.0, 0, 0
    targets = torch.from_numpy(train_y)
    for epoch in range(1, settings.epochs + 1):
        order = torch.randperm(len(train_y), generator=generator)
        for start in range(0, len(order), settings.batch_size):
            rows = order[start: start + settings.batch_size]
            x = torch.from_numpy(train_x[rows.numpy()].astype(np.float32))  # (batch, dim)
            loss = torch.nn.functional.cross_entropy(model(x), targets[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc, _ = _accuracy(model, dev_x, dev_y)
        if acc > best_acc:
            best_acc, best_epoch, waited = acc, epoch, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            waited += 1
            if waited >= settings.patience:
                break
    model.load_state_dict(best_state)
    return model, best_epoch


def probe_layers(activations: dict[str, Activations], splits: dict[str, Tagged],
                 settings: ProbeSettings | None = None,
                 layers: Sequence[int] | None = None) -> dict[str, Any]:
    """Per layer: dev and test accuracy (percent) with correct/total counts."""
    settings = settings or ProbeSettings()
    tags, ids = _tag_ids(splits)
    train_known = ids["train"] >= 0
    results: dict[str, Any] = {"tags": len(tags), "layers": {}}
    for name, data in splits.items():
        results[f"{name}_sentences"] = len(data)
        results[f"{name}_tokens"] = len(ids[name])
    for layer in layers if layers is not None else range(activations["train"].num_layers):
        model, epoch = train_linear(activations["train"].layers[layer][train_known],
                                    ids["train"][train_known], activations["dev"].layers[layer],
                                    ids["dev"], len(tags), settings)
        row: dict[str, Any] = {"best_epoch": epoch}
        for split in ("dev", "test"):
            acc, correct = _accuracy(model, activations[split].layers[layer], ids[split])
            row[split] = {"accuracy": round(acc, 2), "correct": correct,
                          "total": len(ids[split])}
        results["layers"][str(layer)] = row
    return results


def run_pos_probe(weights: str, splits: dict[str, Tagged], settings: ProbeSettings | None = None,
                  device: str = "cpu", batch_size: int = 32,
                  progress: bool = False) -> dict[str, Any]:
    """Encodes every split with the frozen biLM once, then probes each layer."""
    runner = load_runner(weights, device)
    activations = {name: encode(runner, [tokens for tokens, _ in data], batch_size, progress,
                                desc=name) for name, data in splits.items()}
    results = probe_layers(activations, splits, settings)
    results["weights"] = weights
    return results


def format_results(results: dict[str, Any]) -> str:
    """A small table: layer, dev and test accuracy with counts."""
    lines = [f"{'layer':>5}  {'dev acc':>8}  {'(correct/total)':>17}  {'test acc':>8}  "
             f"{'(correct/total)':>17}"]
    for layer, row in results["layers"].items():
        dev, test = row["dev"], row["test"]
        lines.append(f"{layer:>5}  {dev['accuracy']:8.2f}  "
                     f"{dev['correct']:>8,}/{dev['total']:<8,}  {test['accuracy']:8.2f}  "
                     f"{test['correct']:>8,}/{test['total']:<8,}")
    return "\n".join(lines)
