"""The six tasks' full-size configs trained for a fixed number of steps on one device, per
precision: steps/s, peak device memory, and whether the loss is finite and falling.

ELMo comes from a biLM of the paper's original shape (2 x 4096 cells, 512-d projections) with
random weights in the released layout (no released weights are reachable from the GPU
machines); the data are the embedded samples, cycled. `benchmarks/gpu_check.sh` runs this with
the biLM benchmarks and keeps everything in results/gpu/. `--dry-run` runs the same code paths
in seconds on the tiny biLM and the CPU-sized configs (the tests do, on the CPU).

    python benchmarks/gpu_check.py --device cuda --steps 30 --out results/gpu/tasks.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from elmo_experiments import components
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.contracts import Callback

components.load()  # a script is an entry point: every component registered

TASKS = ("ner", "sst5", "snli", "squad", "srl", "coref")
ORIGINAL = BilmOptions(cell_dim=4096, projection_dim=512)  # the paper's biLM (options.json)
TINY = BilmOptions(cell_dim=64, projection_dim=16, filters=((1, 4), (2, 8), (3, 16)),
                   n_highway=1, char_embedding_dim=4)


class CycledLoader:
    """``steps`` training batches of a loader, its epochs one after another."""

    def __init__(self, loader: Any, steps: int) -> None:
        self.loader, self.steps = loader, steps

    def __len__(self) -> int:
        return self.steps

    def batches(self, epoch: int) -> Any:
        epochs = (self.loader.batches(e) for e in itertools.count(epoch))
        return itertools.islice(itertools.chain.from_iterable(epochs), self.steps)


class StepLog(Callback):
    """Trainer callback: each step's loss (from the running mean) and its end time."""

    def __init__(self, device: torch.device) -> None:
        self.device, self.losses, self.times = device, [], []
        self._mean = 0.0

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        self.times.append(time.perf_counter())
        self.losses.append(batch * logs["loss"] - (batch - 1) * self._mean)
        self._mean = logs["loss"]


def train_steps(task: str, precision: str, steps: int, device: torch.device,
                ext_vars: dict[str, str]) -> dict[str, Any]:
    """``steps`` optimizer steps of the task's ELMo config as the trainer takes them."""
    from elmo_experiments.config.loader import load_config
    from elmo_experiments.data.batching import InstanceLoader, index_instances
    from elmo_experiments.experiment import validate_experiment
    from elmo_experiments.run import build_model, build_readers, read_datasets, training_vocabulary
    from elmo_experiments.training.session import seed_everything
    from elmo_experiments.training.trainer import Trainer

    config = f"experiments/{task}.jsonnet"
    overrides = ["trainer.progress_bar=false", "trainer.tensorboard=false",
                 f"trainer.device={device}",
                 f"trainer.amp={'null' if precision == 'fp32' else precision}"]
    experiment = validate_experiment(load_config(config, ext_vars, overrides), config)
    seed = seed_everything(experiment.values)
    reader, evaluation_reader = build_readers(experiment)
    datasets = read_datasets(experiment, reader, evaluation_reader)
    vocab = training_vocabulary(experiment, reader, evaluation_reader, datasets)
    model = build_model(experiment, reader, vocab).to(device)
    settings = experiment["trainer"]
    optimizer = settings["optimizer"].build(
        parameters=[p for p in model.parameters() if p.requires_grad])
    data = index_instances(datasets["train"], reader.fields, vocab)
    loader = CycledLoader(InstanceLoader(data, reader.fields, experiment["data_loader"], seed,
                                         train=True), steps)
    log = StepLog(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = Trainer(model, optimizer, None, loader, None, settings, Path(run_dir), [log])
        trainer.train_epoch(0)
    warm = min(2, len(log.times) - 1)  # the first steps compile kernels and fill caches
    timed = len(log.times) - 1 - warm
    rate = timed / (log.times[-1] - log.times[warm]) if timed > 0 else float("nan")
    third = max(1, len(log.losses) // 3)
    first, last = log.losses[:third], log.losses[-third:]
    finite = all(math.isfinite(v) for v in log.losses)
    return {
        "task": task, "precision": precision, "steps": len(log.losses),
        "steps_per_s": round(rate, 3), "seconds": round(time.perf_counter() - start, 1),
        "peak_memory_mib": round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
        if device.type == "cuda" else None,
        "loss_first_third": round(sum(first) / len(first), 4),
        "loss_last_third": round(sum(last) / len(last), 4),
        "finite": finite, "falling": finite and sum(last) / len(last) < sum(first) / len(first),
        "batch_size": experiment["data_loader"]["batch_size"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"],
                        choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--dry-run", action="store_true",
                        help="the tiny biLM and the CPU-sized configs, a few steps")
    parser.add_argument("--out", default=None, help="write the rows here as JSON")
    args = parser.parse_args()
    from elmo_experiments.bilm.weights import write_random_weights
    from elmo_experiments.devices import resolve_device

    device = resolve_device(args.device, "--device")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    rows, problems = [], []
    with tempfile.TemporaryDirectory() as folder:
        options = TINY if args.dry_run else ORIGINAL
        write_random_weights(folder, options, seed=0)
        ext_vars = {"ELMO_WEIGHTS": folder, **({"ELMO_SIZE": "cpu"} if args.dry_run else {})}
        for var in ("ELMO_DATA_DIR", "ELMO_VECTORS_DIR"):  # the embedded samples, random vectors
            os.environ.pop(var, None)
        for task, precision in itertools.product(args.tasks, args.precisions):
            try:
                row = train_steps(task, precision, args.steps, device, ext_vars)
            except Exception as error:  # a check reports every failure and goes on
                row = {"task": task, "precision": precision, "error": f"{type(error).__name__}: "
                       f"{str(error).splitlines()[0] if str(error) else ''}"}
            rows.append(row)
            if "error" in row or not row["finite"] or not row["falling"]:
                problems.append(f"{task} {precision}")
            print(json.dumps(row), flush=True)
    result = {"device": name, "torch": torch.__version__, "dry_run": args.dry_run,
              "biLM": "random weights, " + ("tiny" if args.dry_run else "original shape"),
              "steps": args.steps, "rows": rows, "problems": problems}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{name}: {len(rows) - len(problems)} of {len(rows)} task runs finite and falling"
          + (f"; problems: {', '.join(problems)}" if problems else ""))


if __name__ == "__main__":
    main()
