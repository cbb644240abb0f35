"""The peak memory of the coreference model on a LitBank document (``reproduction/coref/README.md``,
"Results"): for the configured model with random initial weights, on the CPU,

- ``train``: one training step (forward, backward, gradient clipping as configured, optimizer
  step) on the training reader's largest instance (the window with the most tokens), and
- ``evaluate``: one forward under ``torch.no_grad`` on the longest whole test document (dev
  when the config has no test path).

    [ELMO_SIZE=cpu] python reproduction/coref/memory.py
        [--config experiments/coref_baseline.jsonnet]
        [--out reproduction/coref/results/memory.json]

Each measurement runs in a fresh child process (this script with the hidden ``--child`` flag),
which assembles the experiment as ``elmo-exp train`` does (``load_config``,
``validate_experiment``, the readers, ``build_vocabulary``, ``build_model``,
``index_instances``, ``InstanceLoader``) and reports ``ru_maxrss`` (the process's peak resident
memory) after building the model and the batch, and after the step. The JSON's entry for the
configuration (config and ``ELMO_SIZE``) is replaced, others are kept.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from elmo_experiments import components

components.load()  # a script is an entry point: every component registered

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = "experiments/coref_baseline.jsonnet"
DEFAULT_OUT = ROOT / "reproduction" / "coref" / "results" / "memory.json"
LITBANK = "coref_litbank/conll"
KINDS = ("train", "evaluate")


def tokens_of(instance: dict[str, Any]) -> int:
    """An instance's tokens: its ``document``'s sentences end to end."""
    return sum(len(sentence) for sentence in instance["document"])


def largest(instances: Sequence[dict[str, Any]]) -> int:
    """The index of the instance with the most tokens (the first of equals)."""
    if not instances:
        raise ValueError("no instances")
    return max(range(len(instances)), key=lambda i: (tokens_of(instances[i]), -i))


def candidate_spans(sentence_lengths: Sequence[int], max_width: int) -> int:
    """The spans of at most ``max_width`` tokens inside one sentence (what the model scores)."""
    return sum(length - width + 1 for length in sentence_lengths
               for width in range(1, min(max_width, length) + 1))


def mib(kib: int) -> float:
    return round(kib / 1024, 1)  # ru_maxrss is in KiB on Linux


def litbank_problem() -> str | None:
    """Why ``$ELMO_DATA_DIR`` does not hold LitBank's CoNLL files, or None."""
    root = os.environ.get("ELMO_DATA_DIR", "")
    if not root:
        return "ELMO_DATA_DIR is not set (it must name the data root holding coref_litbank/conll)"
    folder = Path(root) / LITBANK
    if not folder.is_dir() or not any(folder.glob("*.conll")):
        return f"{folder}: no LitBank CoNLL files (ELMO_DATA_DIR must hold {LITBANK}/*.conll)"
    return None


def measure(config_path: str, kind: str) -> dict[str, Any]:
    """One measurement, in this (fresh) process."""
    import torch

    from elmo_experiments.config.loader import load_config
    from elmo_experiments.config.paths import absolute_paths
    from elmo_experiments.contracts import objective
    from elmo_experiments.data.batching import InstanceLoader, index_instances
    from elmo_experiments.experiment import validate_experiment
    from elmo_experiments.run import build_model, build_vocabulary
    from elmo_experiments.training.session import seed_everything

    experiment = validate_experiment(absolute_paths(load_config(config_path)),
                                     source=config_path, check_paths=True)
    seed_everything(experiment.values)
    reader = experiment.reader.build()
    train_data = reader.read(experiment["train_data_path"])
    vocab = build_vocabulary(reader, train_data, experiment["vocabulary"])
    model = build_model(experiment, reader, vocab)
    if kind == "train":
        split, data = "train", train_data
    else:
        evaluation_reader = experiment.evaluation_reader.build()
        split = "test" if experiment["test_data_path"] else "validation"
        data = evaluation_reader.read(experiment[f"{split}_data_path"])
    chosen = data[largest(data)]
    indexed = index_instances([chosen], reader.fields, vocab, source=split)
    batch = next(iter(InstanceLoader(indexed, reader.fields, experiment["data_loader"],
                                     train=False).batches(0)))
    trainer = experiment["trainer"]
    optimizer = trainer["optimizer"].build(
        parameters=[p for p in model.parameters() if p.requires_grad])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if kind == "train":
        model.train()
        optimizer.zero_grad(set_to_none=True)
        output = model(**batch.arguments())
        objective(model, output).backward()  # the loss and the mixes' penalty
        if trainer["grad_norm"] is not None:
            torch.nn.utils.clip_grad_norm_(
                [p for p in model.parameters() if p.grad is not None], trainer["grad_norm"])
        optimizer.step()
    else:
        model.eval()
        with torch.no_grad():
            output = model(**batch.arguments())
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sentences = [len(sentence) for sentence in chosen["document"]]
    window = chosen.get("window")
    return {
        "step": "training step" if kind == "train" else "evaluation forward (no_grad)",
        "split": split,
        "document": chosen["document_id"] + (f" (window {window['index'] + 1} of "
                                             f"{window['windows']})" if window else ""),
        "tokens": sum(sentences),
        "sentences": len(sentences),
        "candidate_spans": candidate_spans(sentences, model.max_span_width),
        "kept_spans": int(output["top_mask"].sum()),
        "antecedents_per_span": int(output["antecedents"].shape[-1]),
        "parameters": sum(p.numel() for p in model.parameters()),
        "before_step_mib": mib(before),
        "peak_mib": mib(after),
        "step_increase_mib": mib(after - before),
        "seconds": round(seconds, 2),
    }


def run_child(config: str, kind: str) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--config", config,
               "--child", kind]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"memory.py: the {kind} measurement failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=DEFAULT_CONFIG)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    problem = litbank_problem()
    if problem is not None:
        raise SystemExit(f"memory.py: {problem}")
    if args.child:
        print(json.dumps(measure(args.config, args.child)))
        return
    import torch

    from elmo_experiments.training.run_dir import write_json
    from elmo_experiments.version import code_version

    size = os.environ.get("ELMO_SIZE") or None
    start = time.perf_counter()
    steps = {kind: run_child(args.config, kind) for kind in KINDS}
    entry = {"config": args.config, "ELMO_SIZE": size, **steps,
             "seconds_total": round(time.perf_counter() - start, 1), "commit": code_version(),
             "torch": torch.__version__, "python": sys.version.split()[0],
             "date": datetime.date.today().isoformat()}
    entries = json.loads(args.out.read_text()) if args.out.is_file() else []
    entries = [e for e in entries if (e["config"], e["ELMO_SIZE"]) != (args.config, size)]
    entries.append(entry)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, entries)
    for kind in KINDS:
        step = steps[kind]
        print(f"{args.config} ELMO_SIZE={size or '-'} {step['step']}: {step['document']}, "
              f"{step['tokens']} tokens, {step['sentences']} sentences: peak "
              f"{step['peak_mib']} MiB (+{step['step_increase_mib']}), {step['seconds']} s")


if __name__ == "__main__":
    main()
