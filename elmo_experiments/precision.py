"""Numeric precision: ``fp32`` (the default, exact to the references) or ``bf16``.

``bf16`` runs matrix products in bfloat16, which CPUs with AMX or AVX-512 BF16 units (and GPUs)
execute several times faster than fp32. On a CPU without them PyTorch emulates bf16 products,
far *slower* than fp32 (0.36x on an Ice Lake Xeon, 0.02x with AVX2 only): there ``bf16``
(``precision: bf16``, ``trainer.amp: bf16``) runs in fp32, with a warning, unless
``ELMO_FORCE_BF16=1`` insists (docs/precision.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import torch

logger = logging.getLogger("elmo_experiments")
PRECISIONS = ("fp32", "bf16")
AMP_CHOICES = ("bf16", "fp16")  # trainer.amp: mixed precision for training
FORCE_BF16 = "ELMO_FORCE_BF16"  # 1: bf16 as asked, even on a CPU that emulates it
BF16_UNITS = ("amx_bf16", "avx512_bf16", "bf16")  # x86 AMX, AVX-512 BF16; Arm's BF16
_warned: set[str] = set()


@lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags as Linux lists them (``/proc/cpuinfo``: x86 ``flags``, Arm
    ``Features``); None where they cannot be read (another system)."""
    try:
        return flags_of(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` says (timings name it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def flags_of(cpuinfo: str) -> frozenset[str] | None:
    """The first processor's flags in the text of ``/proc/cpuinfo``; None if it lists none."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return frozenset(value.split())
    return None


def native_bf16(device: str = "cpu") -> bool:
    """Whether bf16 matrix products run on dedicated hardware on ``device``: a GPU that
    supports bf16, or a CPU whose flags list AMX-BF16, AVX-512 BF16 (or Arm's BF16). oneDNN's
    own flag says only that bf16 is *supported* (emulated on AVX-512 without BF16): it is the
    answer only where the flags cannot be read."""
    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    flags = cpu_flags()
    if flags is None:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return any(unit in flags for unit in BF16_UNITS)


def bf16_forced() -> bool:
    """``ELMO_FORCE_BF16=1``: bf16 runs as asked even where it is emulated (benchmarks)."""
    return os.environ.get(FORCE_BF16, "").strip().lower() in ("1", "true", "yes")


def effective_precision(precision: str | None, device: str = "cpu") -> str | None:
    """The precision that runs when ``precision`` is asked on ``device``: ``bf16`` on a CPU
    without bf16 matrix units is ``fp32`` (faster there, and exact), unless ``bf16_forced``;
    each case is warned about once, as fp16 on a CPU is."""
    if precision == "fp16" and device == "cpu" and "fp16" not in _warned:
        _warned.add("fp16")
        logger.warning("fp16 mixed precision is meant for GPUs; on a CPU use bf16 (fp16 "
                       "products are emulated on most CPUs)")
    if precision != "bf16" or native_bf16(device):
        return precision
    if device.startswith("cuda") or bf16_forced():
        if device not in _warned:
            _warned.add(device)
            logger.warning("bf16 requested, but this %s has no bf16 matrix units: products are "
                           "emulated and much slower than fp32", device)
        return precision
    if "cpu-fp32" not in _warned:
        _warned.add("cpu-fp32")
        logger.warning("bf16 requested, but this CPU has no bf16 matrix units (no AMX, no "
                       "AVX-512 BF16), where bf16 is slower than fp32: running in fp32 (set "
                       "%s=1 to run bf16 anyway)", FORCE_BF16)
    return "fp32"


@contextlib.contextmanager
def autocast(precision: str | None, device: str = "cpu") -> Iterator[None]:
    """Mixed precision: products in bf16 (or fp16); weights, optimizer state and loss in
    fp32. ``None``/``fp32``: no autocast; nor ``bf16`` on a CPU without bf16 matrix units
    (``effective_precision``)."""
    precision = effective_precision(precision, torch.device(device).type)
    if precision in (None, "fp32"):
        yield
        return
    device_type = torch.device(device).type
    dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    with torch.autocast(device_type, dtype=dtype):
        yield


def grad_scaler(precision: str | None, device_type: str) -> torch.amp.GradScaler:
    """fp16 training's dynamic loss scale (gradients stay representable in fp16); a disabled
    scaler, which passes everything through unchanged, for fp32 and bf16."""
    return torch.amp.GradScaler(device_type, enabled=precision == "fp16")


def autocast_dtype(device_type: str = "cpu") -> torch.dtype | None:
    """The low-precision dtype when autocast is on here (for hand-written functions)."""
    if torch.is_autocast_enabled(device_type):
        return torch.get_autocast_dtype(device_type)
    return None


def run_lstm(lstm: torch.nn.RNNBase, inputs: torch.Tensor) -> tuple[torch.Tensor, object]:
    """``lstm(inputs)``; under CPU autocast without bf16 matrix units in fp32, since oneDNN
    has no bf16 LSTM for such CPUs (it fails to build its primitive)."""
    if inputs.device.type == "cpu" and torch.is_autocast_enabled("cpu") and not native_bf16():
        with torch.autocast("cpu", enabled=False):
            return lstm(inputs.float())
    return lstm(inputs)
