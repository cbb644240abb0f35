"""Shared by the benchmark scripts (run them from the repository root)."""

from __future__ import annotations

import argparse
import os
import time

import torch

from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.precision import FORCE_BF16

os.environ.setdefault(FORCE_BF16, "1")  # bf16 measured as asked, also where it is emulated

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="cpu",
                        help="cpu, cuda, cuda:N or auto (a GPU when there is one)")


def add_peak_size_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--peak-size", type=int, default=2048,
                        help="side of the square product the CPU's matmul peak is measured on "
                             "(smoke runs take a small one: emulated bf16 takes minutes at 2048)")


def peak_side(size: int, device: torch.device) -> int:
    """The side ``matmul_peak`` multiplies at on ``device`` when asked for ``size``."""
    return 8192 if device.type == "cuda" else size


def add_cpu_tuning_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-cpu-tuning", action="store_true",
                        help="measure without tune_cpu_runtime() (the trainer applies it)")


def apply_cpu_tuning(args: argparse.Namespace) -> str:
    """tune_cpu_runtime() unless --no-cpu-tuning (call it before any torch work); what to print."""
    from elmo_experiments.cpu_runtime import tune_cpu_runtime

    return "off" if args.no_cpu_tuning else str(tune_cpu_runtime())


def device_of(name: str) -> torch.device:
    from elmo_experiments.devices import resolve_device

    return resolve_device(name, "--device")


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (GPU kernels run asynchronously)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def describe_device(device: torch.device, threads: int) -> str:
    if device.type == "cuda":
        return f"GPU {torch.cuda.get_device_name(device)}"
    return f"{threads} threads, CPU capability {torch.backends.cpu.get_cpu_capability()}"


def matmul_peak(size: int = 2048, repeats: int = 10, precision: str = "fp32",
                budget_s: float = 20.0, device: torch.device | str = "cpu") -> float:
    """Best GFLOP/s of a (size x size) @ (size x size) product in ``precision`` on ``device``
    in this process (fewer repeats once ``budget_s`` is spent: emulated bf16 is very slow).
    On a GPU the product is 8192^2, large enough to fill it."""
    device = torch.device(device)
    size = peak_side(size, device)
    a = torch.randn(size, size, dtype=DTYPES[precision], device=device)
    b = torch.randn(size, size, dtype=DTYPES[precision], device=device)
    torch.mm(a, b)
    synchronize(device)
    best, spent = float("inf"), 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        synchronize(device)
        elapsed = time.perf_counter() - start
        best, spent = min(best, elapsed), spent + elapsed
        if spent > budget_s:
            break
    return 2 * size**3 / best / 1e9


def token_layer_flops(options: BilmOptions) -> float:
    """FLOPs (2 per multiply-add) of the character token layer at one position, all 50
    character positions counted, as the architecture defines it."""
    e, f, p = options.char_embedding_dim, options.num_filters, options.projection_dim
    cnn = sum(2 * n * w * e * (50 - w + 1) for w, n in options.filters)
    highway = options.n_highway * 2 * f * 2 * f
    return cnn + highway + 2 * f * p


def lstm_flops(options: BilmOptions) -> float:
    """FLOPs of both directions' LSTM stacks at one position (input, recurrent, projection)."""
    p, c = options.projection_dim, options.cell_dim
    return 2 * options.n_layers * (2 * p * 4 * c + 2 * p * 4 * c + 2 * c * p)


def forward_flops(options: BilmOptions, positions: int) -> float:
    """FLOPs of one biLM forward over ``positions`` token positions (boundaries included)."""
    return positions * (token_layer_flops(options) + lstm_flops(options))


def training_flops(options: BilmOptions, positions: int, predictions: int,
                   num_samples: int) -> float:
    """FLOPs of one LM training step: forward over ``positions``, a sampled softmax of
    ``num_samples`` (+ the true word) for ``predictions`` per direction, and the backward
    pass counted as twice the forward."""
    softmax = 2 * predictions * 2 * (num_samples + 1) * options.projection_dim
    return 3 * (forward_flops(options, positions) + softmax)
