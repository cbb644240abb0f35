"""``elmo-exp embed`` at corpus scale against the biLM forward, in the same run.

    python benchmarks/bench_embed.py [--weights gutenberg] [--sentences 100000]
                                     [--threads 1] [--interrupt 0.5] [--keep DIR]

Writes a synthetic text (words of a made-up vocabulary with Zipf-like frequencies, 1 to 20 a
line, one line in 100 blank), then runs the real command, ``elmo-exp embed TEXT OUT --weights W
--dtype float16 --pool mean --recover``, in a subprocess with ``--threads`` threads; with
``--interrupt F`` it kills that command (SIGKILL) once F of the batches are recorded and runs it
again to finish. Prints its tokens/s (tokens over the wall time of all runs, their start-up
included) and peak RSS, and, measured in this process just before, the biLM forward's tokens/s
on batches of 64 x 20 tokens with the same weights and threads (no caches, as ``embed``) and the
fraction of the fp32 matmul peak that is. Figures, not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
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


def peak_rss_mb() -> float:
    """The largest resident set of the children waited for so far (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def run_embed(command: list[str], env: dict[str, str], output: Path,
              interrupt: float | None, batches: int) -> tuple[float, int]:
    """Wall seconds of the command (killed at ``interrupt`` of the batches, then run again),
    and how many batches the killed run had recorded."""
    start = time.perf_counter()
    recorded = 0
    if interrupt is not None:
        staging = Staging(output)
        process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
        while process.poll() is None:
            time.sleep(0.5)
            try:
                recorded = int(torch.load(staging.progress, weights_only=True)["batches"])
            except (OSError, RuntimeError, EOFError):
                continue
            if recorded >= interrupt * batches:
                process.send_signal(signal.SIGKILL)
                process.wait()
                break
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if finished.returncode:
        sys.exit(f"elmo-exp embed failed:\n{finished.stderr[-3000:]}")
    return time.perf_counter() - start, recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default="gutenberg")
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--interrupt", type=float, help="kill the command at this fraction")
    parser.add_argument("--keep", type=Path, help="write the text and output here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    info = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in info
                if line.startswith("model name")), "unknown CPU")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU: {cpu}, {os.cpu_count()} cores, load average {load:.1f} at the start; "
          f"{args.threads} thread(s); biLM {args.weights}")
    forward, fraction = forward_speed(args.weights, args.repeats)
    print(f"  biLM forward, 64 x 20 tokens, no caches: {forward:8.0f} tokens/s "
          f"= {fraction:.2f} of the fp32 matmul peak")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        text, output = folder / "corpus.txt", folder / "corpus.hdf5"
        output.unlink(missing_ok=True)
        tokens = write_corpus(text, args.sentences)
        command = [sys.executable, "-m", "elmo_experiments", "embed", str(text), str(output),
                   "--weights", args.weights, "--batch-size", str(args.batch_size),
                   "--dtype", "float16", "--pool", "mean", "--recover"]
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONPATH": str(ROOT)}
        batches = -(-args.sentences // args.batch_size)
        seconds, recorded = run_embed(command, env, output, args.interrupt, batches)
        size = output.stat().st_size / 2**20
    print(f"  elmo-exp embed {args.sentences:,} sentences ({tokens:,} tokens), batch "
          f"{args.batch_size}, --dtype float16 --pool mean --recover"
          + (f", killed after {recorded} of {batches} batches and recovered"
             if args.interrupt is not None else "") + ":")
    print(f"    {tokens / seconds:8.0f} tokens/s = {tokens / seconds / forward:.2f} of the "
          f"forward's, {seconds:.0f} s in all; peak RSS {peak_rss_mb():.0f} MiB; "
          f"output {size:.1f} MiB")


if __name__ == "__main__":
    main()
