"""Task training steps of an older commit against the working tree's, in turns.

    python benchmarks/compare_tasks.py --before 3298c92 [--tasks ner srl] [--rounds 3]

Checks the older commit out into a temporary git worktree (with today's bench_tasks.py and
common.py copied in), then runs ``bench_tasks.py --sizes SIZE`` for each task, the older tree
and this one taking turns, ``--rounds`` times each. A shared machine's speed drifts by tens of
percent over minutes, so only figures taken in turns compare: the table gives each side's
median CPU ms a batch, the speed-up (before / after) and each side's median fraction of the
matmul peak. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TASKS = ("ner", "sst5", "snli", "squad", "srl", "coref", "gap")


def run_bench(tree: Path, task: str, size: str, steps: int) -> dict:
    """One bench_tasks.py run of ``task`` in ``tree``; its row."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run([sys.executable, "benchmarks/bench_tasks.py", "--tasks", task, "--sizes",
                        size, "--steps", str(steps), "--peak-size", "1024", "--out", out.name],
                       cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return json.loads(Path(out.name).read_text())["rows"][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the older commit")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--size", default="cpu", choices=["cpu", "paper"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        before = Path(folder) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(before), commit],
                       cwd=ROOT, check=True)
        try:
            for name in ("bench_tasks.py", "common.py"):
                shutil.copy(HERE / name, before / "benchmarks" / name)
            print(f"{commit} against the working tree, {args.size} size, {args.rounds} rounds "
                  f"in turns, {args.steps} timed steps each")
            print("| task | before CPU ms | after CPU ms | speed-up | fraction of peak, before "
                  "/ after | runs |")
            print("|---|---|---|---|---|---|")
            for task in args.tasks:
                rows: dict[str, list[dict]] = {"before": [], "after": []}
                for _ in range(args.rounds):
                    rows["before"].append(run_bench(before, task, args.size, args.steps))
                    rows["after"].append(run_bench(ROOT, task, args.size, args.steps))
                ms = {k: statistics.median(r["cpu_ms"] for r in v) for k, v in rows.items()}
                peak = {k: statistics.median(r["fraction_of_peak"] for r in v)
                        for k, v in rows.items()}
                runs = "; ".join(f"{b['cpu_ms']:.0f}/{a['cpu_ms']:.0f}"
                                 for b, a in zip(rows["before"], rows["after"], strict=True))
                print(f"| {task} | {ms['before']:,.0f} | {ms['after']:,.0f} | "
                      f"{ms['before'] / ms['after']:.2f}x | {peak['before']:.2f} / "
                      f"{peak['after']:.2f} | {runs} |", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=ROOT,
                           check=False)


if __name__ == "__main__":
    main()
