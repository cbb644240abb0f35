"""One training step of each task model, at its CPU size and its paper size: milliseconds a
batch (wall and process CPU time), the step's FLOPs over the matmul peak measured in the same
process, the top operators and the padding share of its batches.

    python benchmarks/bench_tasks.py [--tasks ner srl] [--sizes cpu paper] [--steps 6]

The models are the tasks' baseline configs (no ELMo, so the figures are the task models' own),
trained as the trainer trains them (forward, loss and penalty, backward, clipping, optimizer
step) on the first batches of their training data: the real data sets with ELMO_DATA_DIR, else
the embedded samples. Run at one thread (the default) and read the CPU time: the machine is
shared, and CPU time is the stable figure. Not a test.

FLOPs: the operators torch's FlopCounterMode counts (matrix products, convolutions), plus the
oneDNN LSTMs, which it cannot see inside, counted as 2 x (input + hidden) x 4 hidden a position
forward and twice that backward. Element-wise work is not counted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from common import add_peak_size_argument, matmul_peak
from torch.utils.flop_counter import FlopCounterMode

from elmo_experiments import components

components.load()  # a script is an entry point: every component registered

TASKS = ("ner", "sst5", "snli", "squad", "srl", "coref", "gap")


@dataclass
class Setup:
    """A task model ready to train, its optimizer, its clipping and a few training batches."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    settings: dict[str, Any]
    batches: list[Any]
    parameters: int


def prepare(task: str, size: str, count: int, seed_offset: int = 0) -> Setup:
    """The task's baseline config at ``size`` (``cpu`` or ``paper``), built as ``train`` builds
    it, with the first ``count`` batches of its training data."""
    from elmo_experiments.config.loader import load_config
    from elmo_experiments.data.batching import InstanceLoader, index_instances
    from elmo_experiments.experiment import validate_experiment
    from elmo_experiments.run import build_model, build_readers, read_datasets, training_vocabulary
    from elmo_experiments.training.session import seed_everything

    config = f"experiments/{task}_baseline.jsonnet"
    overrides = ["trainer.progress_bar=false", "trainer.tensorboard=false", "trainer.device=cpu"]
    experiment = validate_experiment(load_config(config, {"ELMO_SIZE": size}, overrides), config)
    seed = seed_everything(experiment.values) + seed_offset
    reader, evaluation_reader = build_readers(experiment)
    datasets = read_datasets(experiment, reader, evaluation_reader)
    vocab = training_vocabulary(experiment, reader, evaluation_reader, datasets)
    model = build_model(experiment, reader, vocab)
    settings = experiment["trainer"]
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = settings["optimizer"].build(parameters=trained)
    data = index_instances(datasets["train"], reader.fields, vocab)
    loader = InstanceLoader(data, reader.fields, experiment["data_loader"], seed, train=True)
    batches = list(itertools.islice(loader.batches(0), count))
    return Setup(model, optimizer, settings, batches, sum(p.numel() for p in trained))


def train_step(setup: Setup, batch: Any) -> float:
    """One optimizer step on ``batch``, as the trainer takes it (fp32, one process)."""
    from elmo_experiments.contracts import objective

    model, optimizer, settings = setup.model, setup.optimizer, setup.settings
    optimizer.zero_grad(set_to_none=True)
    loss = objective(model, model(**batch.arguments()))
    loss.backward()
    parameters = [p for p in model.parameters() if p.grad is not None]
    if settings["grad_clipping"] is not None:
        torch.nn.utils.clip_grad_value_(parameters, settings["grad_clipping"])
    if settings["grad_norm"] is not None:
        torch.nn.utils.clip_grad_norm_(parameters, settings["grad_norm"])
    optimizer.step()
    return loss.item()


def padding_share(batch: Any) -> float:
    """The share of padded positions over all the batch's text fields' masks."""
    masks = list(batch.masks.values())
    total = sum(m.numel() for m in masks)
    return 1.0 - sum(int(m.sum()) for m in masks) / total if total else 0.0


def lstm_flops(module: torch.nn.LSTM, inputs: torch.Tensor) -> float:
    """Forward + backward FLOPs of a oneDNN LSTM over ``inputs`` (batch_first or not)."""
    positions = inputs.shape[0] * inputs.shape[1]
    hidden = module.hidden_size
    directions = 2 if module.bidirectional else 1
    total, size = 0.0, module.input_size
    for _ in range(module.num_layers):
        total += directions * 3 * 2 * positions * (size + hidden) * 4 * hidden
        size = hidden * directions
    return total


def step_flops(setup: Setup, batch: Any) -> float:
    """The FLOPs of one training step on ``batch`` (see the module's docstring)."""
    lstm_total = [0.0]

    def count(module: torch.nn.Module, args: tuple[Any, ...], output: Any) -> None:
        lstm_total[0] += lstm_flops(module, args[0])

    hooks = [m.register_forward_hook(count) for m in setup.model.modules()
             if isinstance(m, torch.nn.LSTM)]
    try:
        with FlopCounterMode(display=False) as counter:
            train_step(setup, batch)
    finally:
        for hook in hooks:
            hook.remove()
    return counter.get_total_flops() + lstm_total[0]


def top_operators(setup: Setup, batch: Any, count: int = 5) -> list[tuple[str, float]]:
    """The operators with the most self CPU time in one profiled step, with their shares."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        train_step(setup, batch)
    events = [e for e in profiler.key_averages() if e.self_cpu_time_total > 0]
    total = sum(e.self_cpu_time_total for e in events)
    events.sort(key=lambda e: e.self_cpu_time_total, reverse=True)
    return [(e.key, e.self_cpu_time_total / total) for e in events[:count]]


def measure(task: str, size: str, steps: int, peak: float) -> dict[str, Any]:
    """The figures of one task at one size (module docstring)."""
    setup = prepare(task, size, steps + 2)
    warm, timed = setup.batches[:2], setup.batches[2:] or setup.batches
    for batch in warm:  # the first steps allocate and pick kernels
        train_step(setup, batch)
    wall, cpu = [], []
    for batch in timed:
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        train_step(setup, batch)
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    flops = [step_flops(setup, batch) for batch in timed]
    rates = [f / c for f, c in zip(flops, cpu, strict=True)]
    return {
        "task": task, "size": size, "parameters": setup.parameters,
        "batch_size": len(timed[0]), "steps": len(timed),
        "tokens_a_batch": round(statistics.mean(b.num_tokens for b in timed)),
        "wall_ms": round(1000 * statistics.mean(wall), 1),
        "cpu_ms": round(1000 * statistics.mean(cpu), 1),
        "gflop_a_batch": round(statistics.mean(flops) / 1e9, 3),
        "gflop_per_s": round(sum(flops) / sum(cpu) / 1e9, 2),
        "fraction_of_peak": round(sum(flops) / sum(cpu) / 1e9 / peak, 3),
        "fraction_range": [round(min(rates) / 1e9 / peak, 3), round(max(rates) / 1e9 / peak, 3)],
        "padding_share": round(statistics.mean(padding_share(b) for b in timed), 3),
        "top_operators": [[name, round(share, 3)] for name, share in
                          top_operators(setup, timed[0])],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--sizes", nargs="+", default=["cpu", "paper"], choices=["cpu", "paper"])
    parser.add_argument("--steps", type=int, default=6, help="timed steps (after 2 warm ones)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="also write the rows here as JSON")
    add_peak_size_argument(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.pop("ELMO_WEIGHTS", None)
    peaks = [matmul_peak(args.peak_size)]
    data = "the data sets under ELMO_DATA_DIR" if os.environ.get("ELMO_DATA_DIR") else \
        "the embedded samples"
    print(f"{args.threads} thread(s), CPU capability {torch.backends.cpu.get_cpu_capability()}; "
          f"data: {data}; "
          f"fp32 matmul peak {peaks[0]:.1f} GFLOP/s ({args.peak_size}^3)", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("ELMO_CACHE_DIR", cache)
        for task, size in itertools.product(args.tasks, args.sizes):
            row = measure(task, size, args.steps, peaks[0])
            rows.append(row)
            print(json.dumps(row), flush=True)
    peaks.append(matmul_peak(args.peak_size))
    print(f"matmul peak after: {peaks[1]:.1f} GFLOP/s (fractions above use the first)")
    print()
    print("| task | size | batch | CPU ms a batch | wall ms | GFLOP a batch | fraction of peak "
          "| padding | top operators (self CPU share) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ops = ", ".join(f"{n.removeprefix('aten::')} {s:.0%}" for n, s in r["top_operators"][:3])
        print(f"| {r['task']} | {r['size']} | {r['batch_size']} | {r['cpu_ms']:,.0f} | "
              f"{r['wall_ms']:,.0f} | {r['gflop_a_batch']:.2f} | {r['fraction_of_peak']:.2f} | "
              f"{r['padding_share']:.0%} | {ops} |")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"peaks_gflop_per_s": peaks, "rows": rows},
                                             indent=1) + "\n")


if __name__ == "__main__":
    main()
