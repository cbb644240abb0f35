"""Frozen-biLM activations for many sentences, one float16 array per layer."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.devices import resolve_device
from elmo_experiments.progress import progress as progress_display


@dataclass
class Activations:
    """Every token's vectors, sentences end to end: ``layers[j][offsets[i] + t]`` is token t
    of sentence i in layer j (0: the char-CNN token layer, 1..L: the LSTM layers)."""

    layers: list[np.ndarray]  # (L+1) x (tokens, dim), float16
    offsets: np.ndarray  # (sentences + 1,) int64

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def sentence(self, layer: int, index: int) -> np.ndarray:
        """(tokens, dim) of sentence ``index`` in ``layer``."""
        return self.layers[layer][self.offsets[index]: self.offsets[index + 1]]


def load_runner(weights: str, device: str = "cpu") -> BilmRunner:
    """A stateless frozen runner for a biLM spec (directory, shipped or released name)."""
    options_file, weight_file = resolve_weights(weights)
    runner = BilmRunner(load_bilm(options_file, weight_file), "stateless")
    runner.to(resolve_device(device, "--device")).eval()
    runner.bilm.char_encoder.cache_tokens = True
    return runner


def bilm_token(token: str) -> str:
    """The text a biLM reads for a treebank token (PTB bracket escapes as the brackets)."""
    return _ESCAPES.get(token, token)


_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{",
            "-RCB-": "}"}


def iter_layers(runner: BilmRunner, sentences: Sequence[Sequence[str]], batch_size: int = 32,
                progress: bool = False, desc: str = "") -> Iterator[tuple[int, list[np.ndarray]]]:
    """(sentence index, (L+1) x (tokens, dim) float32) for every non-empty sentence, batched
    by length (stateless runs, so a sentence's vectors do not depend on its batch)."""
    lengths = [len(s) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: -lengths[i])  # long first: less padding
    device = next(runner.bilm.parameters()).device
    with progress_display(total=len(sentences), enabled=progress, unit="sentence",
                          desc=desc) as bar:
        for start in range(0, len(order), batch_size):
            rows = [i for i in order[start: start + batch_size] if lengths[i] > 0]
            if rows:
                tokens = [[bilm_token(t) for t in sentences[i]] for i in rows]
                with torch.no_grad():
                    result, _ = runner(batch_to_ids(tokens).to(device))
                values = [layer.float().cpu().numpy() for layer in result]  # (batch, seq, dim)
                for b, i in enumerate(rows):
                    yield i, [v[b, : lengths[i]] for v in values]
            bar.update(min(batch_size, len(order) - start))


def encode(runner: BilmRunner, sentences: Sequence[Sequence[str]], batch_size: int = 32,
           progress: bool = False, desc: str = "") -> Activations:
    """Runs the biLM once per sentence and keeps every token's vectors in float16."""
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sentences], out=offsets[1:])
    layers: list[np.ndarray] | None = None
    for i, values in iter_layers(runner, sentences, batch_size, progress, desc):
        if layers is None:
            layers = [np.zeros((int(offsets[-1]), v.shape[-1]), dtype=np.float16)
                      for v in values]
        for j, value in enumerate(values):
            layers[j][offsets[i]: offsets[i + 1]] = value
    if layers is None:
        raise ValueError("no tokens to encode")
    return Activations(layers, offsets)
