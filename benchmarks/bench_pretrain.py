"""biLM pretraining throughput: training tokens/s for the small and original architectures.

    python benchmarks/bench_pretrain.py [--sizes small original] [--batch 64] [--tokens 20]
                                        [--steps 3] [--vocab 50000] [--threads 2]

Each step is a full training step (forward, sampled softmax, backward, Adam update) on random
sentences; the fp32 matmul peak of the same process is printed for reference. Figures only.
"""

from __future__ import annotations

import argparse
import random
import time

import torch
from common import matmul_peak

from elmo_experiments import components  # noqa: F401  (fills the registry)
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.config.validate import Validator

SIZES = {
    # experiments/bilm/small.jsonnet
    "small": {"cell_dim": 512, "projection_dim": 128, "n_highway": 1, "char_embedding_dim": 16,
              "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256]], "num_samples": 4096},
    # experiments/bilm/original.jsonnet
    "original": {"cell_dim": 4096, "projection_dim": 512, "n_highway": 2,
                 "char_embedding_dim": 16, "num_samples": 8192,
                 "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512],
                             [7, 1024]]},
}


def build(size: str, vocab: int) -> torch.nn.Module:
    validator = Validator()
    spec = validator.component({"type": "bilm_lm", "dropout": 0.1, **SIZES[size]}, "model",
                               "model")
    assert not validator.problems, validator.problems
    return spec.build(vocab_size=vocab, seed=0)


def batch(size: int, tokens: int, vocab: int, rng: random.Random) -> dict[str, torch.Tensor]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [["".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))
              for _ in range(tokens)] for _ in range(size)]
    targets = torch.tensor([[rng.randrange(3, vocab) for _ in range(tokens)] for _ in words])
    return {"char_ids": batch_to_ids(words), "targets": targets,
            "mask": torch.ones(size, tokens, dtype=torch.bool)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["small", "original"], choices=SIZES)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=50000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"fp32 matmul peak: {matmul_peak():.1f} GFLOP/s ({args.threads} threads)")
    rng = random.Random(0)
    for size in args.sizes:
        model = build(size, args.vocab).train()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        data = batch(args.batch, args.tokens, args.vocab, rng)
        times = []
        for _ in range(args.steps + 1):  # the first step warms up
            start = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            model(**data)["loss"].backward()
            optimizer.step()
            times.append(time.perf_counter() - start)
        step = min(times[1:])
        params = sum(p.numel() for p in model.bilm.parameters()) / 1e6
        print(f"{size}: {params:.1f}M biLM parameters, softmax {args.vocab} x "
              f"{model.softmax.weight.shape[1]}, batch {args.batch} x {args.tokens}: "
              f"{step:.2f} s a step, {args.batch * args.tokens / step:,.0f} training tokens/s")


if __name__ == "__main__":
    main()
