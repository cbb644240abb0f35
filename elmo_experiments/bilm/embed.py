"""``elmo-exp embed``: biLM layers for a text file (one sentence per line) into an HDF5 file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.data.files import atomic_write, iter_lines
from elmo_experiments.data.hdf5_output import HDF5Output
from elmo_experiments.devices import resolve_device
from elmo_experiments.progress import progress as progress_display

LAYER_CHOICES = ("all", "top", "average")


def _batches(path: str | Path, batch_size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for _, line in iter_lines(path):
        batch.append(line.rstrip("\r\n"))
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _select(layers: torch.Tensor, mode: str) -> np.ndarray:
    # layers: (layers, tokens, dim)
    if mode == "top":
        return layers[-1].numpy()
    if mode == "average":
        return layers.mean(dim=0).numpy()
    return layers.numpy()


def embed_file(input_path: str | Path, output_path: str | Path, weights: str,
               layers: str = "all", batch_size: int = 64, state: str = "stateless",
               progress: bool = True, precision: str = "fp32", device: str = "cpu") -> int:
    """Write dataset ``"i"`` for line i (blank lines give 0 tokens) and ``sentence_to_index``.

    Lines are processed in order, ``batch_size`` at a time, so stateful runs see the batches
    exactly as they appear in the file. Returns the number of lines.
    """
    import h5py

    options_file, weight_file = resolve_weights(weights)
    runner = BilmRunner(load_bilm(options_file, weight_file), state, precision=precision)
    target = resolve_device(device, "--device")
    runner.to(target)
    runner.bilm.char_encoder.cache_tokens = True
    total = sum(1 for _ in iter_lines(input_path))
    index = 0

    def write(tmp: str) -> None:  # a full disk: HDF5Output keeps HDF5 from crashing
        nonlocal index
        sentence_to_index: dict[str, str] = {}
        with HDF5Output(tmp) as out, progress_display(
                total=total, enabled=progress, unit="sentence", leave=True) as bar:
            for lines in _batches(input_path, batch_size):
                tokens = [line.split() for line in lines]
                with torch.no_grad():
                    result, _ = runner(batch_to_ids(tokens).to(target))
                stacked = torch.stack(result, dim=1).cpu()  # (batch, layers, seq, dim)
                for row, (line, words) in enumerate(zip(lines, tokens, strict=True)):
                    selected = _select(stacked[row, :, : len(words)], layers)
                    out.file.create_dataset(str(index), data=selected)
                    out.check()  # stop at the first failed write
                    sentence_to_index.setdefault(line.strip(), str(index))
                    index += 1
                bar.update(len(lines))
            index_dataset = out.file.create_dataset("sentence_to_index", (1,),
                                                    dtype=h5py.string_dtype(encoding="utf-8"))
            index_dataset[0] = json.dumps(sentence_to_index)

    atomic_write(output_path, write)
    return index

