"""``elmo-exp embed`` at corpus scale against the biLM forward, in the same run.

    python benchmarks/bench_embed.py [--weights gutenberg] [--sentences 10000 100000]
                                     [--threads 1] [--interrupt 0.5]

Writes a synthetic text per size (words of a made-up vocabulary with Zipf-like frequencies, 1 to
20 a line, one line in 100 blank), then runs the real command, ``elmo-exp embed TEXT OUT
--weights W --dtype float16 --pool mean --recover``, in a subprocess with ``--threads``
threads; with ``--interrupt F`` it kills that command (SIGKILL) once F of the batches are
recorded and runs it again to finish. Prints, per size, its tokens/s (tokens over the wall time
of all runs, their start-up included) and the largest peak RSS of its processes, and, measured
in this process just before, the biLM forward's tokens/s on batches of 64 x 20 tokens with the
same weights and threads (no caches, as ``embed``) and the fraction of the fp32 matmul peak
that is. Figures, not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from bench_bilm import WORDS, sentences, time_forward
from common import forward_flops, matmul_peak

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.embed import Staging
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.precision import cpu_name

ROOT = Path(__file__).resolve().parents[1]


def write_corpus(path: Path, count: int, seed: int = 0) -> int:
    """``count`` lines of synthetic text; returns the number of tokens."""
    rng = random.Random(seed)
    ranks = [1.0 / (rank + 1) for rank in range(len(WORDS))]
    tokens = 0
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(count):
            length = 0 if rng.random() < 0.01 else rng.randint(1, 20)
            handle.write(" ".join(rng.choices(WORDS, weights=ranks, k=length)) + "\n")
            tokens += length
    return tokens


def forward_speed(weights: str, repeats: int) -> tuple[float, float]:
    """biLM forward tokens/s on 64 x 20 tokens, and its fraction of the fp32 matmul peak."""
    options_file, weight_file = resolve_weights(weights)
    bilm = load_bilm(options_file, weight_file)
    runner = BilmRunner(bilm, "stateless")
    ids = batch_to_ids(sentences(64, 20, seed=0))
    seconds = time_forward(runner, ids, repeats)
    peak = matmul_peak()
    return 64 * 20 / seconds, forward_flops(bilm.options, 64 * 22) / seconds / 1e9 / peak


def wait(process: subprocess.Popen[bytes], block: bool = True) -> float | None:
    """Reap ``process`` (None if ``block`` is false and it still runs); its peak RSS in MiB."""
    pid, status, usage = os.wait4(process.pid, 0 if block else os.WNOHANG)
    if not pid:
        return None
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024  # Linux reports KiB


def recorded_batches(staging: Staging) -> int:
    try:
        return int(torch.load(staging.progress, weights_only=True)["batches"])
    except (OSError, RuntimeError, EOFError):  # not there yet, or being replaced
        return 0


def run_embed(command: list[str], env: dict[str, str], output: Path,
              interrupt: float | None, batches: int) -> tuple[float, int, float]:
    """Wall seconds of the command (killed at ``interrupt`` of the batches, then run again),
    how many batches the killed run had recorded, and the runs' largest peak RSS (MiB)."""
    start = time.perf_counter()
    recorded, rss = 0, 0.0
    if interrupt is not None:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
        while (killed := wait(process, block=False)) is None:
            time.sleep(0.5)
            recorded = recorded_batches(Staging(output))
            if recorded >= interrupt * batches:
                process.send_signal(signal.SIGKILL)
                killed = wait(process)
                break
        rss = killed or 0.0
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=log)
        rss = max(rss, wait(process) or 0.0)
        if process.returncode:
            log.seek(0)
            sys.exit(f"elmo-exp embed failed:\n{log.read().decode()[-3000:]}")
    return time.perf_counter() - start, recorded, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default="gutenberg")
    parser.add_argument("--sentences", type=int, nargs="+", default=[100_000])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--interrupt", type=float, help="kill the command at this fraction")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cpu = cpu_name()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU: {cpu}, {os.cpu_count()} cores, load average {load:.1f} at the start; "
          f"{args.threads} thread(s); biLM {args.weights}")
    forward, fraction = forward_speed(args.weights, args.repeats)
    print(f"  biLM forward, 64 x 20 tokens, no caches: {forward:8.0f} tokens/s "
          f"= {fraction:.2f} of the fp32 matmul peak")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONPATH": str(ROOT)}
    for count in args.sentences:
        with tempfile.TemporaryDirectory() as folder:
            text, output = Path(folder) / "corpus.txt", Path(folder) / "corpus.hdf5"
            tokens = write_corpus(text, count)
            command = [sys.executable, "-m", "elmo_experiments", "embed", str(text),
                       str(output), "--weights", args.weights, "--batch-size",
                       str(args.batch_size), "--dtype", "float16", "--pool", "mean",
                       "--recover"]
            batches = -(-count // args.batch_size)
            seconds, recorded, rss = run_embed(command, env, output, args.interrupt, batches)
            size = output.stat().st_size / 2**20
        print(f"  elmo-exp embed {count:,} sentences ({tokens:,} tokens), batch "
              f"{args.batch_size}, --dtype float16 --pool mean --recover"
              + (f", killed after {recorded} of {batches} batches and recovered"
                 if recorded else "") + ":")
        print(f"    {tokens / seconds:8.0f} tokens/s = {tokens / seconds / forward:.2f} of the "
              f"forward's, {seconds:.0f} s in all; peak RSS {rss:.0f} MiB; "
              f"output {size:.1f} MiB")


if __name__ == "__main__":
    main()
