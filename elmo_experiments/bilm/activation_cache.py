"""A cache of per-sentence activations of a frozen encoder (memory, optional disk).

The ``elmo`` embedder caches its biLM's layers, the ``transformer`` embedder its pooled hidden
layers. Keys are SHA-1 digests of a namespace (the weights' digest and whatever else the
activations depend on: the biLM's state rule, the pooling) and the sentence, so a change of
weights or settings can never serve stale vectors. Stateful runs must not use it.

Training reads the same sentences in every epoch, a cyclic scan: a least-recently-used
memory cache smaller than the data set would evict each sentence just before it comes back
and never hit. So the memory part keeps what it first admitted and, once full, admits nothing
more: a budget of half the data set serves half of every later epoch.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.config.registry import NON_NEGATIVE, Param

# A disk folder for the activation caches of every run that does not name its own (a sweep's
# cells then compute each sentence's activations once between them: `elmo-exp sweep
# --activation-cache DIR`). Cached values are the encoder's own, so results do not change.
ACTIVATION_CACHE_ENV = "ELMO_ACTIVATION_CACHE"

CACHE_PARAMS = (
    Param("enabled", bool, True, doc="cache per-sentence activations of the frozen encoder "
          "(elmo: never in stateful mode)"),
    Param("memory_mb", float, 1024.0, bounds=NON_NEGATIVE),
    Param("disk_dir", str, None,
          doc="also keep activations on disk here, shared by every run that names it (keys "
          "hold the weights' digest); unset: $ELMO_ACTIVATION_CACHE, if set"),
    Param("fp16", bool, False, doc="store activations in half precision (changes results)"),
)


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

    def open_namespace(self, describe: Callable[[], str]) -> None:
        """On first use (after any checkpoint load): the namespace ``describe()`` gives, plus
        the storage precision and any autocast in force (mixed-precision runs compute other
        activations, so they never share entries with fp32 runs)."""
        if not self.namespace:
            mixed = "".join(f"|autocast-{device}-{torch.get_autocast_dtype(device)}"
                            for device in ("cpu", "cuda") if torch.is_autocast_enabled(device))
            self.set_namespace(f"{describe()}|{'fp16' if self.fp16 else 'fp32'}{mixed}")

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


def configured_cache(cache: dict[str, Any]) -> ActivationCache | None:
    """The cache that an embedder's ``cache`` config (``CACHE_PARAMS``) asks for, or None."""
    if not cache.get("enabled", True):
        return None
    disk_dir = cache.get("disk_dir") or os.environ.get(ACTIVATION_CACHE_ENV) or None
    return ActivationCache("", cache.get("memory_mb", 1024.0), disk_dir, cache.get("fp16", False))


def read_through(cache: ActivationCache, keys: list[str | None], lengths: list[int],
                 shape: tuple[int, int, int, int],
                 compute: Callable[[list[int]], torch.Tensor]) -> torch.Tensor:
    """(rows, layers, width, dim) on the CPU, zero beyond each row's length: every row's cached
    activations, or, for the rows not cached yet, ``compute(rows)`` -> (those rows, layers,
    at least their longest length, dim), which are stored. A row whose key is None stays zero
    (an empty sentence) and is neither looked up nor computed."""
    out = torch.zeros(shape)
    missing = []
    for row, key in enumerate(keys):
        found = None if key is None else cache.get(key)
        if found is not None:
            out[row, :, : lengths[row]] = found
        elif key is not None:
            missing.append(row)
    if missing:
        new = compute(missing).detach().cpu()  # one copy off the device for the batch
        for position, row in enumerate(missing):
            activations = new[position, :, : lengths[row]]
            cache.put(keys[row], activations)  # type: ignore[arg-type]  # missing: keyed rows
            out[row, :, : lengths[row]] = activations  # as computed, even if stored as fp16
    return out


def state_digest(module: torch.nn.Module) -> str:
    """SHA-1 of a module's state (names and values): part of a cache namespace."""
    digest = hashlib.sha1()
    for name, tensor in sorted(module.state_dict().items()):
        digest.update(name.encode())
        raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8)  # any dtype
        digest.update(raw.numpy().tobytes())
    return digest.hexdigest()
