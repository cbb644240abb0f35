"""Shared by the benchmark scripts (run them from the repository root)."""

from __future__ import annotations

import time

import torch


def matmul_peak(size: int = 2048, repeats: int = 10) -> float:
    """Best GFLOP/s of an fp32 (size x size) @ (size x size) product in this process."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9
