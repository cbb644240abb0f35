"""Table 5: word sense disambiguation by the nearest mean sense vector, one biLM layer at a time.

Training (SemCor): each sense key's vector is the mean of the layer's vectors over its tagged
occurrences (a multiword expression: the mean over its tokens; a word tagged with several keys
counts for each). Test (Raganato's sets): an instance takes, among the senses of its lemma and
pos seen in SemCor, the one whose mean is nearest by cosine; a lemma+pos SemCor never tagged
falls back to WordNet's first sense.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elmo_experiments.probing.activations import iter_layers, load_runner
from elmo_experiments.probing.raganato import eval_files, read_keys, read_xml, score
from elmo_experiments.probing.semcor import SEMCOR, read_semcor
from elmo_experiments.probing.senses import Annotation, Sentence, key_lemma_pos

FirstSenseFn = Callable[[str, str], "str | None"]


def span_vectors(layers: Sequence[np.ndarray], annotation: Annotation) -> list[np.ndarray]:
    """Per layer, the mean vector (dim,) of the annotation's tokens; layers: (tokens, dim)."""
    return [layer[annotation.start: annotation.end].astype(np.float64).mean(axis=0)
            for layer in layers]


class SenseAccumulator:
    """Sums of each sense key's vectors per layer, turned into a ``SenseInventory``."""

    def __init__(self) -> None:
        self.sums: dict[str, list[np.ndarray]] = {}
        self.counts: dict[str, int] = {}

    def add(self, key: str, vectors: Sequence[np.ndarray]) -> None:
        """Adds one occurrence of ``key``: one (dim,) vector per layer."""
        if key not in self.sums:
            self.sums[key] = [np.zeros_like(v, dtype=np.float64) for v in vectors]
            self.counts[key] = 0
        for total, vector in zip(self.sums[key], vectors, strict=True):
            total += vector
        self.counts[key] += 1

    def finish(self) -> SenseInventory:
        keys = sorted(self.sums)
        layers = len(next(iter(self.sums.values()))) if keys else 0
        means = []
        for j in range(layers):
            matrix = np.stack([self.sums[k][j] / self.counts[k] for k in keys])  # (keys, dim)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            means.append((matrix / np.maximum(norms, 1e-12)).astype(np.float32))
        return SenseInventory(keys, means, np.array([self.counts[k] for k in keys]))


@dataclass
class SenseInventory:
    """Unit-length mean vectors of the senses seen in training, per layer."""

    keys: list[str]
    means: list[np.ndarray]  # layers x (keys, dim), unit rows
    counts: np.ndarray  # (keys,)

    def __post_init__(self) -> None:
        self.by_lemma: dict[tuple[str, str], list[int]] = {}
        for index, key in enumerate(self.keys):
            self.by_lemma.setdefault(key_lemma_pos(key), []).append(index)

    def nearest(self, layer: int, lemma: str, pos: str, vector: np.ndarray) -> str | None:
        """The seen sense of ``lemma``/``pos`` whose mean is nearest ``vector`` (cosine; ties:
        the first key in sorted order), or None when training never tagged it."""
        candidates = self.by_lemma.get((lemma.lower(), pos))
        if not candidates:
            return None
        similarities = self.means[layer][candidates] @ vector  # (candidates,)
        return self.keys[candidates[int(np.argmax(similarities))]]


def disambiguate(inventory: SenseInventory, layer: int, annotation: Annotation,
                 vector: np.ndarray, first_sense: FirstSenseFn | None) -> str | None:
    """The nearest seen sense, else the first sense (None when neither knows the lemma)."""
    found = inventory.nearest(layer, annotation.lemma, annotation.pos, vector)
    if found is None and first_sense is not None:
        found = first_sense(annotation.lemma, annotation.pos)
    return found


def train_senses(layer_iter: Iterable[tuple[int, list[np.ndarray]]],
                 sentences: Sequence[Sentence]) -> SenseInventory:
    """Mean vectors of every sense key tagged in ``sentences`` from their encoded layers."""
    accumulator = SenseAccumulator()
    for index, layers in layer_iter:
        for annotation in sentences[index].annotations:
            vectors = span_vectors(layers, annotation)
            for key in annotation.keys:
                accumulator.add(key, vectors)
    return accumulator.finish()


def predict_set(layer_iter: Iterable[tuple[int, list[np.ndarray]]],
                sentences: Sequence[Sentence], inventory: SenseInventory,
                first_sense: FirstSenseFn | None) -> tuple[list[dict[str, str | None]], int]:
    """Per layer, instance id -> predicted key; and how many instances SemCor covers."""
    predictions: list[dict[str, str | None]] = [{} for _ in inventory.means]
    covered = 0
    for index, layers in layer_iter:
        for annotation in sentences[index].annotations:
            vectors = span_vectors(layers, annotation)
            covered += (annotation.lemma, annotation.pos) in inventory.by_lemma
            for j, vector in enumerate(vectors):
                unit = vector / max(float(np.linalg.norm(vector)), 1e-12)
                predictions[j][annotation.id] = disambiguate(inventory, j, annotation, unit,
                                                             first_sense)
    return predictions, covered


def first_sense_answers(sentences: Sequence[Sentence],
                        first_sense: FirstSenseFn) -> dict[str, str | None]:
    """The first-sense baseline's answers."""
    return {a.id: first_sense(a.lemma, a.pos) for s in sentences for a in s.annotations}


def run_wsd_probe(weights: str, data_root: str | Path, eval_sets: Sequence[str],
                  first_sense: FirstSenseFn | None, device: str = "cpu", batch_size: int = 32,
                  progress: bool = False) -> dict[str, Any]:
    """Trains sense means on SemCor with the frozen biLM and scores each evaluation set."""
    evaluation = {}
    for name in eval_sets:
        xml, key_file = eval_files(data_root, name)
        evaluation[name] = (read_xml(xml), read_keys(key_file))
    wanted = {(a.lemma, a.pos) for sentences, _ in evaluation.values()
              for s in sentences for a in s.annotations}
    semcor = read_semcor(Path(data_root) / SEMCOR)
    for sentence in semcor:  # only the senses of lemmas the evaluation asks about
        sentence.annotations = [a for a in sentence.annotations if (a.lemma, a.pos) in wanted]
    semcor = [s for s in semcor if s.annotations]
    runner = load_runner(weights, device)
    inventory = train_senses(iter_layers(runner, [s.tokens for s in semcor], batch_size,
                                         progress, "semcor"), semcor)
    results: dict[str, Any] = {"weights": weights, "semcor_sentences": len(semcor),
                               "senses": len(inventory.keys), "sets": {}}
    for name, (sentences, gold) in evaluation.items():
        predictions, covered = predict_set(
            iter_layers(runner, [s.tokens for s in sentences], batch_size, progress, name),
            sentences, inventory, first_sense)
        row: dict[str, Any] = {"instances": len(gold), "covered_by_semcor": covered,
                               "layers": {str(j): score(gold, p).as_dict()
                                          for j, p in enumerate(predictions)}}
        if first_sense is not None:
            row["first_sense"] = score(gold, first_sense_answers(sentences, first_sense)).as_dict()
        results["sets"][name] = row
    return results


def format_results(results: dict[str, Any]) -> str:
    """One line per evaluation set: F1 of the first sense and of each layer."""
    sets = results["sets"]
    layers = list(next(iter(sets.values()))["layers"]) if sets else []
    header = f"{'set':<12} {'instances':>9} {'first sense':>11} " + " ".join(
        f"{'layer ' + j:>8}" for j in layers)
    lines = [header + "   (F1; P and R in the JSON)"]
    for name, row in sets.items():
        first = row.get("first_sense", {}).get("f1")
        lines.append(f"{name:<12} {row['instances']:>9,} "
                     f"{'-' if first is None else f'{first:.1f}':>11} "
                     + " ".join(f"{row['layers'][j]['f1']:8.1f}" for j in layers))
    return "\n".join(lines)
