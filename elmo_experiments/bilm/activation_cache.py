"""A cache of per-sentence biLM activations for a frozen biLM (memory, optional disk).

Keys are SHA-1 digests of (weights digest, state rule, the sentence's character ids), so a
change of weights or state mode can never serve stale vectors. Stateful runs must not use it.

Training reads the same sentences in every epoch, a cyclic scan: a least-recently-used
memory cache smaller than the data set would evict each sentence just before it comes back
and never hit. So the memory part keeps what it first admitted and, once full, admits nothing
more: a budget of half the data set serves half of every later epoch.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np
import torch


class ActivationCache:
    """Maps a sentence's ids to its (layers, tokens, dim) activations."""

    def __init__(self, namespace: str, memory_mb: float = 1024.0, disk_dir: str | None = None,
                 fp16: bool = False) -> None:
        self.budget = int(memory_mb * 2**20)
        self.fp16 = fp16
        self.disk_root = Path(disk_dir) if disk_dir else None
        self.disk: Path | None = None
        self._memory: dict[str, torch.Tensor] = {}
        self._bytes = 0
        self.hits = self.misses = 0
        self.namespace = ""
        self.set_namespace(namespace)

    def set_namespace(self, namespace: str) -> None:
        """What the keys depend on besides the sentence (weights, state rule, precision)."""
        if namespace != self.namespace:
            self._memory.clear()
            self._bytes = 0
        self.namespace = namespace
        if self.disk_root is not None:
            self.disk = self.disk_root / hashlib.sha1(namespace.encode()).hexdigest()[:16]

    def key(self, ids: np.ndarray) -> str:
        digest = hashlib.sha1(self.namespace.encode())
        digest.update(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
        return digest.hexdigest()

    def get(self, key: str) -> torch.Tensor | None:
        found = self._memory.get(key)
        if found is None and self.disk is not None and (self.disk / f"{key}.npy").is_file():
            found = torch.from_numpy(np.load(self.disk / f"{key}.npy"))
            self._remember(key, found)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        return found.float() if found.dtype != torch.float32 else found

    def put(self, key: str, activations: torch.Tensor) -> None:
        dtype = torch.float16 if self.fp16 else torch.float32
        if self.disk is None and not self._admits(key, activations.numel() * dtype.itemsize):
            return  # a full memory cache and no disk: nothing to copy the activations for
        stored = activations.detach().to("cpu", dtype).clone()
        self._remember(key, stored)
        if self.disk is not None:
            self.disk.mkdir(parents=True, exist_ok=True)
            handle, tmp = tempfile.mkstemp(dir=self.disk, suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                np.save(out, stored.numpy())
            os.replace(tmp, self.disk / f"{key}.npy")

    def _admits(self, key: str, size: int) -> bool:
        """Whether memory takes a new entry of ``size`` bytes (once full, the first stay)."""
        return key not in self._memory and self._bytes + size <= self.budget

    def _remember(self, key: str, tensor: torch.Tensor) -> None:
        size = tensor.numel() * tensor.element_size()
        if self._admits(key, size):
            self._memory[key] = tensor
            self._bytes += size
