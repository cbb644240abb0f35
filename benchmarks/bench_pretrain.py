"""biLM pretraining throughput in fp32 and bf16 (autocast), against each precision's peak.

    python benchmarks/bench_pretrain.py [--sizes gutenberg small original]
                                        [--precisions fp32 bf16] [--batch 64] [--tokens 20]
                                        [--steps 3] [--vocab 28000] [--threads 2]
                                        [--device cpu|cuda]

The architectures are the ``model`` sections of ``experiments/bilm/<size>.jsonnet``. Each step
is a full training step as the config trains (forward, sampled softmax, backward, gradient
clipping to the config's norm, its optimizer's update) on random sentences; the precisions
take turns step by step, and each reports its fastest of `--steps`.
Printed per size and precision: seconds a step, training tokens/s, the model FLOPs per token
(as the architecture defines them: all 50 character positions, both directions, the sampled
softmax, backward = 2 x forward), the GFLOP/s those FLOPs make, and the fraction of the same
precision's matmul peak measured in this process (on ``--device``; on a GPU fp16 too, with
its loss scale). On the CPU, one more step per precision runs under the profiler: the seconds
its matrix products take (``aten::mm``, ``addmm``, ``bmm``, ``baddbmm``), and the bf16 / fp32
ratio the step would reach if every other operation took no time, the bound that the matrix
units set. Figures only.
"""

from __future__ import annotations

import argparse
import copy
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from common import (
    add_cpu_tuning_argument,
    add_device_argument,
    add_peak_size_argument,
    apply_cpu_tuning,
    describe_device,
    device_of,
    matmul_peak,
    peak_side,
    synchronize,
    training_flops,
)

from elmo_experiments import components
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.config.loader import load_config
from elmo_experiments.config.validate import Validator
from elmo_experiments.precision import autocast, grad_scaler, native_bf16

components.load()  # a script is an entry point: every component registered

ROOT = Path(__file__).resolve().parents[1]


def build(size: str, vocab: int) -> tuple[torch.nn.Module, Any, float | None]:
    """The config's model, its optimizer spec (built later on the model's parameters) and its
    gradient-norm limit."""
    config = load_config(ROOT / "experiments" / "bilm" / f"{size}.jsonnet")
    validator = Validator()
    spec = validator.component(config["model"], "model", "model")
    optimizer = validator.component(config["trainer"]["optimizer"], "optimizer",
                                    "trainer.optimizer")
    assert not validator.problems and spec and optimizer, validator.problems
    return spec.build(vocab_size=vocab, seed=0), optimizer, config["trainer"].get("grad_norm")


def batch(size: int, tokens: int, vocab: int, rng: random.Random) -> dict[str, torch.Tensor]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [["".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))
              for _ in range(tokens)] for _ in range(size)]
    targets = torch.tensor([[rng.randrange(3, vocab) for _ in range(tokens)] for _ in words])
    return {"char_ids": batch_to_ids(words), "targets": targets,
            "mask": torch.ones(size, tokens, dtype=torch.bool)}


def trainer_step(model: torch.nn.Module, optimizer_spec: Any, grad_norm: float | None,
                 data: dict[str, torch.Tensor], precision: str,
                 device: torch.device) -> Callable[[], float]:
    """One timed training step of ``model`` in ``precision`` per call, as the trainer runs it."""
    optimizer = optimizer_spec.build(parameters=list(model.parameters()))
    scaler = grad_scaler(precision, device.type)  # fp16: the trainer's dynamic loss scale

    def step() -> float:
        synchronize(device)
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with autocast(precision, device.type):
            loss = model(**data)["loss"]
        scaler.scale(loss).backward()
        if grad_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
        scaler.step(optimizer)
        scaler.update()
        synchronize(device)
        return time.perf_counter() - start

    return step


MATRIX_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def matrix_seconds(step: Callable[[], float]) -> float:
    """Seconds spent in matrix products during one ``step`` (CPU; the profiler's self times)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return sum(event.self_cpu_time_total for event in prof.key_averages()
               if event.key in MATRIX_OPS) / 1e6


def step_seconds(steps: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """The fastest of ``rounds`` steps per precision, after one warm-up step each. The
    precisions take turns, step by step, so that a slower spell of a shared machine slows
    them alike rather than one of them."""
    times: dict[str, list[float]] = {precision: [] for precision in steps}
    for round_ in range(rounds + 1):
        for precision, step in steps.items():
            seconds = step()
            if round_:
                times[precision].append(seconds)
    return {precision: min(values) for precision, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["gutenberg", "small"])
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"],
                        choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=28000)
    parser.add_argument("--threads", type=int, default=2)
    add_peak_size_argument(parser)
    add_device_argument(parser)
    add_cpu_tuning_argument(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tuned = apply_cpu_tuning(args)
    device = device_of(args.device)
    print(f"{describe_device(device, args.threads)}, native bf16 matrix units: "
          f"{native_bf16(device.type)}, CPU runtime tuning: {tuned}")
    peaks = {p: matmul_peak(args.peak_size, precision=p, device=device)
             for p in args.precisions}
    for precision, peak in peaks.items():
        print(f"{precision} matmul peak ({peak_side(args.peak_size, device)}^3): "
              f"{peak:.1f} GFLOP/s")
    rng = random.Random(0)
    for size in args.sizes:
        model, optimizer_spec, grad_norm = build(size, args.vocab)
        model = model.train().to(device)
        data = {k: v.to(device) for k, v in batch(args.batch, args.tokens, args.vocab,
                                                   rng).items()}
        positions, predictions = args.batch * (args.tokens + 2), args.batch * (args.tokens + 1)
        flops = training_flops(model.bilm.options, positions, predictions,
                               model.softmax.num_samples)
        tokens = args.batch * args.tokens
        params = sum(p.numel() for p in model.bilm.parameters()) / 1e6
        print(f"{size}: {params:.1f}M biLM parameters, softmax {args.vocab} x "
              f"{model.softmax.weight.shape[1]}, {model.softmax.num_samples} samples, batch "
              f"{args.batch} x {args.tokens}: {flops / tokens / 1e6:.1f} MFLOP per token")
        speeds = {}
        copies = {p: model if i == 0 else copy.deepcopy(model)  # each trains on its own
                  for i, p in enumerate(args.precisions)}
        steps = {p: trainer_step(copies[p], optimizer_spec, grad_norm, data, p, device)
                 for p in args.precisions}
        best = step_seconds(steps, args.steps)
        for precision, seconds in best.items():
            speeds[precision] = tokens / seconds
            achieved = flops / seconds / 1e9
            print(f"  {precision}: {seconds:.3f} s a step, {tokens / seconds:8,.0f} training "
                  f"tokens/s, {achieved:6.1f} GFLOP/s = {achieved / peaks[precision]:.2f} of the "
                  f"{precision} peak")
        if "bf16" in speeds and "fp32" in speeds:
            print(f"  bf16 / fp32 tokens/s: {speeds['bf16'] / speeds['fp32']:.2f}x")
        if device.type == "cpu":
            matrix = {p: matrix_seconds(step) for p, step in steps.items()}
            print("  matrix products (one profiled step): " + ", ".join(
                f"{p} {seconds:.3f} s" for p, seconds in matrix.items()))
            if "bf16" in matrix and "fp32" in matrix:
                print(f"  bf16 / fp32 if all but the matrix products were free: "
                      f"{matrix['fp32'] / matrix['bf16']:.2f}x")


if __name__ == "__main__":
    main()
