"""The benchmark scripts run on the embedded samples (so an API change cannot break them
unnoticed); their figures are not checked here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_ner_runs_an_epoch_on_the_sample() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    result = subprocess.run([sys.executable, "benchmarks/bench_ner.py", "--epochs", "1"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "epoch 1: train" in result.stdout


def test_bench_pretrain_times_both_precisions_on_a_tiny_architecture() -> None:
    result = subprocess.run([sys.executable, "benchmarks/bench_pretrain.py", "--sizes", "tiny",
                             "--steps", "1", "--batch", "4", "--tokens", "5", "--vocab", "200",
                             "--threads", "1"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for line in ("fp32 matmul peak", "tiny: ", "  fp32: ", "  bf16: ", "bf16 / fp32 tokens/s",
                 "matrix products (one profiled step): fp32 ", "if all but the matrix products"):
        assert line in result.stdout
