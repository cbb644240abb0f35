"""biLM throughput against the machine's fp32 matmul peak, and the ELMo caches' effect.

    python benchmarks/bench_bilm.py [--size original|small|tiny] [--batch 64] [--tokens 20]
                                    [--threads 2] [--repeats 3] [--skip-ner]
                                    [--precisions fp32 bf16] [--device cpu|cuda]

Prints, per precision (fp32; bf16 with the whole biLM converted): tokens/s of the biLM forward
(random weights in the released layout, no caches), the achieved GFLOP/s (all 50 character
positions counted) over the peak of a large matmul in that precision in the same process, the speed
with the token-level character cache, and for NER on the embedded sample the time of a second
epoch with the activation cache over the baseline's epoch time. Figures, not a test.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch
from common import (
    add_cpu_tuning_argument,
    add_device_argument,
    add_peak_size_argument,
    apply_cpu_tuning,
    describe_device,
    device_of,
    forward_flops,
    matmul_peak,
    peak_side,
    synchronize,
)

from elmo_experiments import components
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm, write_random_weights
from elmo_experiments.precision import native_bf16

components.load()  # a script is an entry point: every component registered

SIZES = {
    "original": BilmOptions(cell_dim=4096, projection_dim=512),
    "small": BilmOptions(cell_dim=1024, projection_dim=128, n_highway=1),
    "tiny": BilmOptions(cell_dim=64, projection_dim=16, filters=((1, 4), (2, 8), (3, 16)),
                        n_highway=1, char_embedding_dim=4),
}
def _vocabulary(size: int = 2000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(1, 10))) for _ in range(size)]


WORDS = _vocabulary()


def sentences(batch: int, tokens: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    ranks = [1.0 / (rank + 1) for rank in range(len(WORDS))]  # Zipf-like word frequencies
    return [rng.choices(WORDS, weights=ranks, k=tokens) for _ in range(batch)]


def time_forward(bilm, ids: torch.Tensor, repeats: int) -> float:  # type: ignore[no-untyped-def]
    with torch.no_grad():
        bilm(ids)
        best = float("inf")
        for _ in range(repeats):
            synchronize(ids.device)
            start = time.perf_counter()
            bilm(ids)
            synchronize(ids.device)
            best = min(best, time.perf_counter() - start)
    return best


def bench_bilm(args: argparse.Namespace) -> None:
    options = SIZES[args.size]
    device = device_of(args.device)
    peaks = {p: matmul_peak(args.peak_size, precision=p, device=device)
             for p in args.precisions}
    ids = batch_to_ids(sentences(args.batch, args.tokens, seed=0)).to(device)
    tokens = args.batch * args.tokens
    flops = forward_flops(options, args.batch * (args.tokens + 2))
    print(f"biLM {args.size}: batch {args.batch} x {args.tokens} tokens, "
          f"{flops / (args.batch * (args.tokens + 2)) / 1e6:.1f} MFLOP per position "
          f"({describe_device(device, args.threads)}, native bf16: "
          f"{native_bf16(device.type)})")
    speeds = {}
    for precision in args.precisions:
        with tempfile.TemporaryDirectory() as folder:
            write_random_weights(folder, options, seed=0)
            bilm = load_bilm(Path(folder) / "options.json", Path(folder) / "weights.hdf5")
        bilm.to(device)
        runner = BilmRunner(bilm, "stateless", precision=precision)
        seconds = time_forward(runner, ids, args.repeats)
        peak = max(peaks[precision], matmul_peak(args.peak_size, precision=precision,
                                                  device=device))  # the stricter ratio
        achieved = flops / seconds / 1e9
        speeds[precision] = tokens / seconds
        side = peak_side(args.peak_size, device)
        print(f"  {precision} matmul peak ({side}^3):  {peak:8.1f} GFLOP/s (best before/after)")
        print(f"  {precision} forward, no caches:    {tokens / seconds:8.0f} tokens/s  "
              f"{seconds * 1000:7.1f} ms/batch  {achieved:6.1f} GFLOP/s "
              f"= {achieved / peak:.2f} of peak")
        if precision == "fp32":
            bilm.char_encoder.cache_tokens = True
            time_forward(runner, ids, 1)  # fills the character cache
            cached = time_forward(runner, batch_to_ids(sentences(args.batch, args.tokens, 1)
                                                       ).to(device), args.repeats)
            print(f"  fp32 forward, character cache warm: {tokens / cached:8.0f} tokens/s  "
                  f"{cached * 1000:7.1f} ms/batch  ({seconds / cached:.2f}x)")
    if len(speeds) == 2:
        print(f"  bf16 / fp32 tokens/s: {speeds['bf16'] / speeds['fp32']:.2f}x")


def bench_ner_cache(args: argparse.Namespace) -> None:
    """Second-epoch time of NER with ELMo (activation cache) over the baseline's epoch time."""
    import os

    from elmo_experiments.run import train

    os.environ.pop("ELMO_DATA_DIR", None)
    root = Path(__file__).resolve().parents[1]
    common = ["trainer.num_epochs=5", "trainer.progress_bar=false", "data_loader.batch_size=8",
              "trainer.patience=null"]
    with tempfile.TemporaryDirectory() as folder:
        write_random_weights(Path(folder) / "bilm", SIZES["small"], seed=0)
        os.environ["ELMO_WEIGHTS"] = str(Path(folder) / "bilm")
        base = train(root / "experiments/ner_baseline.jsonnet", Path(folder) / "base",
                     overrides=common)
        elmo = train(root / "experiments/ner.jsonnet", Path(folder) / "elmo", overrides=common)
    # epoch 1 fills the cache; epochs 2-5 read it (median, to steady sub-second timings)
    base_epoch = statistics.median(base["epoch_durations_s"][1:])
    elmo_epoch = statistics.median(elmo["epoch_durations_s"][1:])
    first = elmo["epoch_durations_s"][0]
    print("NER on the embedded sample, small-size biLM (random weights), batch 8:")
    print(f"  baseline epoch: {base_epoch:.3f}s; ELMo epoch 1 (filling the cache): {first:.3f}s; "
          f"later ELMo epochs (cache warm): {elmo_epoch:.3f}s")
    print(f"  ratio {elmo_epoch / base_epoch:.2f} (target <= 1.3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="original")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-ner", action="store_true")
    add_peak_size_argument(parser)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"],
                        choices=["fp32", "bf16"])
    add_device_argument(parser)
    add_cpu_tuning_argument(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tuned = apply_cpu_tuning(args)
    print(f"CPU runtime tuning: {tuned}")
    bench_bilm(args)
    if not args.skip_ner:
        bench_ner_cache(args)


if __name__ == "__main__":
    main()
