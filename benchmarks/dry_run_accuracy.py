"""How close ``elmo-exp pretrain --dry-run``'s estimate comes to the real first epoch.

    python benchmarks/dry_run_accuracy.py LABEL CONFIG [-o OVERRIDE ...] [--steps 10]
                                          [--output results/bilm_dry_run.json]

Prepares the corpus once (into a temporary ``corpus.prepared_dir``, timed), runs the dry run on
it, then trains the same config for one real epoch in a temporary run directory and compares
the estimated epoch with the run's ``epoch_durations_s[0]`` (training steps and validation). An
epoch too long to run here is shortened for both with ``-o data_loader.batches_per_epoch=N``
(the estimate scales with the steps, so the ratio stands for the full epoch). The entry is
written under LABEL into the output file, with the CPU, the torch threads and the load average
before and after (other processes on the machine slow both figures alike, not necessarily by
the same amount). Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elmo_experiments import components
from elmo_experiments.bilm.pretraining.dry_run import dry_run
from elmo_experiments.bilm.pretraining.run import pretrain
from elmo_experiments.data.files import atomic_write_text
from elmo_experiments.precision import cpu_name
from elmo_experiments.version import code_version

components.load()  # a script is an entry point: every component registered


def measure(config: str, overrides: list[str], steps: int) -> dict[str, Any]:
    """The dry run's figures and the real first epoch's duration."""
    with tempfile.TemporaryDirectory(prefix="dry-run-accuracy-") as scratch:
        prepared = [*overrides, f"corpus.prepared_dir={Path(scratch) / 'corpus'}",
                    "trainer.num_epochs=1", "trainer.progress_bar=false"]
        load = [os.getloadavg()[0]]
        estimate = dry_run(config, overrides=prepared, steps=steps)  # prepares the corpus
        load.append(os.getloadavg()[0])
        start = time.perf_counter()
        metrics = pretrain(config, Path(scratch) / "run", overrides=prepared)
        wall = time.perf_counter() - start
        load.append(os.getloadavg()[0])
    real = metrics["epoch_durations_s"][0]
    return {"config": config, "overrides": overrides, "cpu": cpu_name(), "code": code_version(),
            "device": estimate["device"], "load_average_1min": load,
            "estimate": {k: v for k, v in estimate.items() if k != "config"},
            "real_first_epoch_s": real, "real_run_wall_s": wall,
            "estimate_over_real": estimate["estimated_epoch_s"] / real}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("label")
    parser.add_argument("config")
    parser.add_argument("-o", "--override", dest="overrides", action="append", default=[])
    parser.add_argument("--steps", type=int, default=10, help="steps the dry run times")
    parser.add_argument("--note", default="", help="recorded with the figures")
    parser.add_argument("--output", default="results/bilm_dry_run.json")
    args = parser.parse_args()
    entry = {**measure(args.config, args.overrides, args.steps), "note": args.note}
    output = Path(args.output)
    results = json.loads(output.read_text()) if output.is_file() else {}
    results[args.label] = entry
    atomic_write_text(output, json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(json.dumps(entry, indent=2))


if __name__ == "__main__":
    main()
