"""The benchmark scripts run on the embedded samples (so an API change cannot break them
unnoticed); their figures are not checked here. They are the project's measuring instruments,
not a feature of the framework, and each starts a process (30 s together): ``make test-all``
(CI) runs them, ``make test`` does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_bench_ner_runs_an_epoch_on_the_sample() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    result = subprocess.run([sys.executable, "benchmarks/bench_ner.py", "--epochs", "1"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "epoch 1: train" in result.stdout


def test_bench_pretrain_times_both_precisions_on_a_tiny_architecture() -> None:
    result = subprocess.run([sys.executable, "benchmarks/bench_pretrain.py", "--sizes", "tiny",
                             "--steps", "1", "--batch", "4", "--tokens", "5", "--vocab", "200",
                             "--threads", "1", "--peak-size", "128"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for line in ("fp32 matmul peak", "tiny: ", "  fp32: ", "  bf16: ", "bf16 / fp32 tokens/s",
                 "matrix products (one profiled step): fp32 ", "if all but the matrix products"):
        assert line in result.stdout


@pytest.mark.slow
def test_gpu_check_dry_run_takes_every_path_on_the_cpu(tmp_path: Path) -> None:
    """benchmarks/gpu_check.sh --dry-run: the six tasks in fp32 and bf16 (tiny biLM, CPU-sized
    configs), the biLM forward and the pretraining benchmarks, all written to one folder."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ELMO_DATA_DIR", "ELMO_VECTORS_DIR", "ELMO_WEIGHTS", "ELMO_SIZE")}
    env.update(GPU_CHECK_OUT=str(tmp_path), PYTHON=sys.executable, OMP_NUM_THREADS="1")
    result = subprocess.run(["bash", "benchmarks/gpu_check.sh", "--dry-run"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    check = json.loads((tmp_path / "tasks.json").read_text())
    assert check["dry_run"] and check["device"] == "cpu"
    rows = {(row["task"], row["precision"]): row for row in check["rows"]}
    assert sorted(rows) == sorted((t, p) for t in ("ner", "sst5", "snli", "squad", "srl", "coref")
                                  for p in ("fp32", "bf16"))
    assert [k for k, row in rows.items() if "error" in row or not row["finite"]
            or row["steps"] != 3] == [], \
        rows
    assert "tokens/s" in (tmp_path / "bench_bilm.txt").read_text()
    assert "  bf16: " in (tmp_path / "bench_pretrain.txt").read_text()
    assert "# device: cpu" in (tmp_path / "header.txt").read_text()


def test_bench_embed_runs_the_command_on_a_synthetic_text(tiny_bilm_dir: Path) -> None:
    result = subprocess.run([sys.executable, "benchmarks/bench_embed.py", "--weights",
                             str(tiny_bilm_dir), "--sentences", "300", "--repeats", "1"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for line in ("biLM forward, 64 x 20 tokens, no caches:", "elmo-exp embed 300 sentences",
                 "of the forward's", "peak RSS"):
        assert line in result.stdout


def test_bench_tasks_times_a_step_and_counts_its_flops(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    out = tmp_path / "rows.json"
    result = subprocess.run([sys.executable, "benchmarks/bench_tasks.py", "--tasks", "ner", "srl",
                             "--sizes", "cpu", "--steps", "1", "--peak-size", "128",
                             "--out", str(out)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {row["task"]: row for row in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"ner", "srl"}
    for row in rows.values():
        assert row["cpu_ms"] > 0 and row["gflop_a_batch"] > 0 and 0 <= row["padding_share"] < 1
        assert row["top_operators"] and "| " + row["task"] + " | cpu |" in result.stdout
    # NER's LSTMs run in oneDNN, which the FLOP counter cannot see: counted from their shapes
    assert any("mkldnn_rnn" in name for name, _ in rows["ner"]["top_operators"])
