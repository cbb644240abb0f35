"""A cache of per-sentence activations of a frozen encoder (memory, optional disk).

The ``elmo`` embedder caches its biLM's layers, the ``transformer`` embedder its pooled hidden
layers. Keys are SHA-1 digests of a namespace (the weights' digest and whatever else the
activations depend on: the biLM's state rule, the pooling) and the sentence, so a change of
weights or settings can never serve stale vectors. Stateful runs must not use it.

Training reads the same sentences in every epoch, a cyclic scan: a least-recently-used
memory cache smaller than the data set would evict each sentence just before it comes back
and never hit. So the memory part keeps what it first admitted and, once full, admits nothing
more: a budget of half the data set serves half of every later epoch.

A disk entry is an ``.npy`` file (``np.load`` reads it) followed by a checksum over its key and
bytes (``entry_bytes``): a truncated, damaged, swapped or foreign entry, or one whose shape is
not the sentence's, is recomputed, never used. The first ``NAMED_DAMAGED`` such entries get a
warning naming each; after that one more line says the rest are recomputed quietly (a cache
written by an older version holds only entries without a checksum: tens of thousands of lines
would bury the log), and ``damaged`` counts them all.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.config.registry import NON_NEGATIVE, Param
from elmo_experiments.data.files import atomic_write

logger = logging.getLogger("elmo_experiments")

ENTRY_MARK = b"elmo-act"  # after the .npy bytes: then the checksum
DIGEST_SIZE = 4  # bytes of CRC-32 over the key and the .npy bytes (3 GB/s: reading stays fast)
NAMED_DAMAGED = 5  # damaged entries warned of one by one; the rest are counted in `damaged`
STORED_TYPES = (np.dtype(np.float32), np.dtype(np.float16))

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
        self.hits = self.misses = self.damaged = 0
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

    def get(self, key: str, shape: tuple[int, ...] | None = None) -> torch.Tensor | None:
        """The activations stored for ``key`` (float32), or None; with ``shape`` (layers,
        tokens, dim) a disk entry of another shape counts as damaged (recomputed)."""
        found = self._memory.get(key)
        if found is None and self.disk is not None:
            found = self._read(key, shape)
            if found is not None:
                self._remember(key, found)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        return found.float() if found.dtype != torch.float32 else found

    def _read(self, key: str, shape: tuple[int, ...] | None) -> torch.Tensor | None:
        """A disk entry, checked; None if absent or damaged (then with a warning)."""
        assert self.disk is not None
        path = self.disk / f"{key}.npy"
        try:
            with open(path, "rb") as handle:  # into a bytearray: a writable array, no copy
                data = bytearray(os.fstat(handle.fileno()).st_size)
                del data[handle.readinto(data):]
        except FileNotFoundError:
            return None
        except OSError as error:
            self._damaged(path, f"cannot read it: {error.strerror or error}")
            return None
        array = entry_array(key, data)
        if isinstance(array, str):
            problem = array
        elif shape is not None and array.shape != shape:
            problem = f"shape {array.shape}, the sentence's is {shape}"
        else:
            return torch.from_numpy(array)
        self._damaged(path, problem)
        return None

    def _damaged(self, path: Path, problem: str) -> None:
        self.damaged += 1
        if self.damaged <= NAMED_DAMAGED:
            logger.warning("%s: damaged activation cache entry (%s); recomputing it", path,
                           problem)
        if self.damaged == NAMED_DAMAGED:
            logger.warning("%s: further damaged entries are recomputed without a warning each "
                           "(an activation cache written by an older version has no "
                           "checksums; delete it to start afresh)", self.disk)

    def put(self, key: str, activations: torch.Tensor) -> None:
        dtype = torch.float16 if self.fp16 else torch.float32
        if self.disk is None and not self._admits(key, activations.numel() * dtype.itemsize):
            return  # a full memory cache and no disk: nothing to copy the activations for
        stored = activations.detach().to("cpu", dtype).clone()
        self._remember(key, stored)
        if self.disk is not None:  # not synced: a torn entry is found and recomputed
            data = entry_bytes(key, stored.numpy())
            atomic_write(self.disk / f"{key}.npy", lambda tmp: Path(tmp).write_bytes(data),
                         durable=False)

    def _admits(self, key: str, size: int) -> bool:
        """Whether memory takes a new entry of ``size`` bytes (once full, the first stay)."""
        return key not in self._memory and self._bytes + size <= self.budget

    def _remember(self, key: str, tensor: torch.Tensor) -> None:
        size = tensor.numel() * tensor.element_size()
        if self._admits(key, size):
            self._memory[key] = tensor
            self._bytes += size


def _digest(key: str, body: bytes | memoryview) -> bytes:
    return zlib.crc32(body, zlib.crc32(key.encode())).to_bytes(DIGEST_SIZE, "little")


def entry_bytes(key: str, array: np.ndarray) -> bytes:
    """A disk entry: ``array`` as ``.npy`` bytes, ``ENTRY_MARK``, and the checksum of the key
    and those bytes (so an entry copied under another key is refused too)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array))
    body = buffer.getvalue()
    return body + ENTRY_MARK + _digest(key, body)


def entry_array(key: str, data: bytes | bytearray) -> np.ndarray | str:
    """The array of disk entry ``data`` for ``key`` (a view of ``data``), or what is wrong
    with it: no checksum (truncated, or written before entries had one), another checksum, a
    header that is not an array of activations, or fewer or more bytes than its shape."""
    trailer = len(ENTRY_MARK) + DIGEST_SIZE
    if len(data) < trailer or data[-trailer:-DIGEST_SIZE] != ENTRY_MARK:
        return f"{len(data):,} bytes without a checksum: truncated or not an entry"
    body = memoryview(data)[:-trailer]
    if _digest(key, body) != data[-DIGEST_SIZE:]:
        return "checksum mismatch: damaged, or another key's entry"
    size_bytes = 2 if len(body) > 6 and body[6] == 1 else 4  # .npy version 1: 2-byte length
    stream = io.BytesIO(body[: 8 + size_bytes + int.from_bytes(body[8 : 8 + size_bytes],
                                                               "little")])  # the header
    try:
        version = np.lib.format.read_magic(stream)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran_order, dtype = read_header(stream)
    except (ValueError, EOFError) as error:
        return f"not an array ({error})"
    if fortran_order or dtype not in STORED_TYPES or len(shape) != 3:
        return f"holds {dtype} {shape}, not (layers, tokens, dim) float activations"
    offset = stream.tell()  # the values follow the header
    if len(body) - offset != int(np.prod(shape)) * dtype.itemsize:
        return f"{len(body) - offset:,} bytes of values for shape {shape}"
    return np.frombuffer(data, dtype, int(np.prod(shape)), offset).reshape(shape)


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
        found = None if key is None else cache.get(key, (shape[1], lengths[row], shape[3]))
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
