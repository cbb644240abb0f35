"""Process-wide CPU settings that training and inference run faster with (measured in
``benchmarks/bench_pretrain.py``), applied once per process by ``tune_cpu_runtime()``.

- Denormal floats flushed to zero (``torch.set_flush_denormal``): the sampled softmax's
  ``exp`` of very negative logits otherwise yields denormals, which x86 CPUs handle in
  microcode at a fraction of the normal speed. Only values below 1.2e-38 change.
- glibc's allocator keeps freed memory for reuse (``mallopt``: no ``mmap`` for large blocks, no
  trimming): PyTorch allocates its large CPU tensors afresh on every step, and by default each
  such block is a new ``mmap`` whose pages fault in again on first touch; on virtual machines
  that costs more than the arithmetic. The process's resident memory then stays at its peak.

The denormal setting is per thread: threads created later inherit it, those already running
(PyTorch's compute threads start at the first parallel operation) keep theirs. So the entry
points apply it first thing (the command line, a sweep worker, the benchmarks); ``set_up``
applies it again for training through the Python API, whose callers get it in full by calling
this first.
"""

from __future__ import annotations

import ctypes
import functools
import sys

import torch

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_MAX = -1, -2, -4  # glibc's mallopt parameters


@functools.cache
def tune_cpu_runtime() -> dict[str, bool]:
    """Apply the settings above (once per process); returns which took effect."""
    flushed = bool(torch.set_flush_denormal(True))
    kept = False
    if sys.platform.startswith("linux"):
        try:
            mallopt = ctypes.CDLL(None).mallopt  # glibc; absent on musl and elsewhere
        except (OSError, AttributeError):
            mallopt = None
        if mallopt is not None:
            kept = all(mallopt(parameter, value) == 1 for parameter, value in (
                (M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, 2**31 - 1), (M_TOP_PAD, 64 << 20)))
    return {"flush_denormal": flushed, "malloc_keeps_memory": kept}
