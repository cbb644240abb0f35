"""Numeric precision: ``fp32`` (the default, exact to the references) or ``bf16``.

``bf16`` runs matrix products in bfloat16, which CPUs with AMX or AVX-512 BF16 units (and GPUs)
execute several times faster than fp32. On a CPU without them PyTorch emulates bf16 products,
far *slower* than fp32: ``warn_if_emulated`` says so once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import torch

logger = logging.getLogger("elmo_experiments")
PRECISIONS = ("fp32", "bf16")
AMP_CHOICES = ("bf16", "fp16")  # trainer.amp: mixed precision for training
_warned: set[str] = set()


def native_bf16(device: str = "cpu") -> bool:
    """Whether bf16 matrix products run on dedicated hardware on ``device``."""
    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def warn_if_emulated(precision: str, device: str = "cpu") -> None:
    if precision == "fp16" and device == "cpu" and "fp16" not in _warned:
        _warned.add("fp16")
        logger.warning("fp16 mixed precision is meant for GPUs; on a CPU use bf16 (fp16 "
                       "products are emulated on most CPUs)")
    if precision == "bf16" and not native_bf16(device) and device not in _warned:
        _warned.add(device)
        logger.warning("bf16 requested, but this %s has no bf16 matrix units (capability %s): "
                       "products are emulated and much slower than fp32", device,
                       torch.backends.cpu.get_cpu_capability())


@contextlib.contextmanager
def autocast(precision: str | None, device: str = "cpu") -> Iterator[None]:
    """Mixed precision: products in bf16 (or fp16); weights, optimizer state and loss in
    fp32. ``None``/``fp32``: no autocast."""
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
