"""The supplement's perplexity table (Peters et al. 2018, A.1) for our biLM: each task's dev text
under the shipped biLM before and after its domain fine-tuning, into results/bilm_finetuning.json.

Fine-tune first (one pass over the task's training text; experiments/bilm/finetune_<task>.jsonnet):

    ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/finetune_ner.jsonnet \\
        -s runs/bilm_finetuned/ner --init-from gutenberg
    ELMO_DATA_DIR=/path/to/data python reproduction/bilm/finetuning.py ner [sst5 ...]

A task given again replaces its entry; the others are kept. `make tables` shows the file.

`--run DIR` measures one continued biLM (a further lever, such as
experiments/bilm/gutenberg_wide.jsonnet) on each task's dev text instead, into its own file:

    ELMO_DATA_DIR=/path/to/data python reproduction/bilm/finetuning.py ner sst5 \
        --run runs/bilm_wide --output results/bilm_wide.json
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

from elmo_experiments import components

components.load()  # a script is an entry point: every component registered

ROOT = Path(__file__).resolve().parents[2]
TASKS = ("ner", "sst5", "snli", "squad", "srl", "coref")
EXT_VARS = {"ner": {}, "sst5": {"ELMO_SIZE": "cpu"}, "snli": {"ELMO_SIZE": "cpu"},
            "squad": {"ELMO_SIZE": "cpu"}, "srl": {"ELMO_SIZE": "cpu"},
            "coref": {"ELMO_SIZE": "cpu"}}  # as the finetune configs and the sweeps read them


@functools.lru_cache
def _digest(bilm: str) -> str:
    """A biLM's weights digest, read once however many tasks it is measured on."""
    from elmo_experiments.bilm.pretrained import resolve_weights
    from elmo_experiments.bilm.weights import weights_digest

    return weights_digest(*resolve_weights(bilm))


def measure(task: str, run_dir: Path, before: str, run_config: str | None = None
            ) -> dict[str, Any]:
    """One task's row: dev perplexity before and after, and the fine-tuning run's record
    (``run_config``: the run's pretraining config; default the task's finetune config)."""
    from elmo_experiments.bilm.pretraining.perplexity import perplexity

    metrics_file = run_dir / "metrics.json"
    if not metrics_file.is_file():
        raise SystemExit(f"{run_dir}: no metrics.json; fine-tune first (see this file's "
                         "docstring)")
    run = json.loads(metrics_file.read_text())
    config = ROOT / "experiments" / f"{task}.jsonnet"
    figures = {name: perplexity(weights, str(config), "experiment", "validation",
                                progress=False, ext_vars=EXT_VARS[task])
               for name, weights in (("before", before), ("after", str(run_dir / "bilm")))}
    rounded = {name: {k: round(v, 2) if isinstance(v, float) else v
                      for k, v in result.items()} for name, result in figures.items()}
    return {
        "dev_text": f"experiments/{task}.jsonnet validation "
                    f"({' '.join(f'{k}={v}' for k, v in EXT_VARS[task].items()) or 'full size'})",
        "tokens": figures["before"]["tokens"],
        "before": {k: v for k, v in rounded["before"].items() if k != "tokens"},
        "after": {k: v for k, v in rounded["after"].items() if k != "tokens"},
        "biLM_before_sha1": _digest(before),
        "biLM_after_sha1": _digest(str(run_dir / "bilm")),
        "finetuning": {
            "config": run_config or f"experiments/bilm/finetune_{task}.jsonnet",
            "init_from": run.get("init_from", {}).get("name"),
            "training_tokens": run.get("corpus", {}).get("tokens", {}).get("train"),
            "wall_seconds": round(run.get("training_duration_s", 0.0), 1),
            "tokens_per_second": round(run.get("training_tokens_per_s", 0.0), 1),
            "heldout_perplexity": round(run.get("best_validation_perplexity", 0.0), 2),
            "code": run.get("code"),
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tasks", nargs="*", help=f"any of {', '.join(TASKS)} (default: all)")
    parser.add_argument("--runs", default="runs/bilm_finetuned",
                        help="the fine-tuning runs, one folder a task")
    parser.add_argument("--before", default="gutenberg", help="the biLM fine-tuned")
    parser.add_argument("--run", default=None,
                        help="one continued biLM's run for every task (a further lever)")
    parser.add_argument("--output", default=str(ROOT / "results" / "bilm_finetuning.json"))
    args = parser.parse_args(argv)
    args.tasks = args.tasks or list(TASKS)
    unknown = sorted(set(args.tasks) - set(TASKS))
    if unknown:
        parser.error(f"unknown task {', '.join(unknown)} (known: {', '.join(TASKS)})")
    from elmo_experiments.data.files import atomic_write
    from elmo_experiments.version import code_version

    output = Path(args.output)
    kind = "bilm_continued" if args.run else "bilm_finetuning"
    data = json.loads(output.read_text()) if output.is_file() else {"kind": kind, "tasks": {}}
    config = None
    if args.run:
        stored = json.loads((Path(args.run) / "run.json").read_text())["config"]["path"]
        config = Path(stored).resolve().relative_to(ROOT).as_posix()
    for task in args.tasks:
        run_dir = Path(args.run) if args.run else Path(args.runs) / task
        data["tasks"][task] = measure(task, run_dir, args.before, config)
        after = data["tasks"][task]["after"]["perplexity"]
        print(f"{task}: {data['tasks'][task]['before']['perplexity']} -> {after}",
              file=sys.stderr)
    data["before"] = args.before
    data["command"] = " ".join(["python reproduction/bilm/finetuning.py", *args.tasks,
                                *(["--run", args.run, "--output", args.output] if args.run
                                  else [])])
    data["code"] = code_version()
    data["tasks"] = {t: data["tasks"][t] for t in TASKS if t in data["tasks"]}
    atomic_write(str(output), lambda tmp: Path(tmp).write_text(
        json.dumps(data, indent=1, sort_keys=True) + "\n"))


if __name__ == "__main__":
    main()
