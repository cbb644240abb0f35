"""Seconds per epoch and tokens/s of the NER baseline (CoNLL-2003 with ELMO_DATA_DIR, else sample).

    python benchmarks/bench_ner.py [--epochs 3] [--config experiments/ner_baseline.jsonnet]
                                   [--device cpu|cuda] [--amp bf16|fp16]

Uses the project's own trainer for each epoch; prints the figures and the dev and test F1 after
each epoch (to compare learning curves epoch for epoch with the reference point in
reproduction/ner/README.md; nothing is selected on test here). Not a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from elmo_experiments import components
from elmo_experiments.config.loader import load_config
from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.devices import trainer_device
from elmo_experiments.experiment import validate_experiment
from elmo_experiments.precision import FORCE_BF16
from elmo_experiments.run import build_model, build_vocabulary
from elmo_experiments.training.evaluation import evaluate
from elmo_experiments.training.session import seed_everything
from elmo_experiments.training.trainer import Trainer

components.load()  # a script is an entry point: every component registered

os.environ.setdefault(FORCE_BF16, "1")  # bf16 measured as asked, also where it is emulated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="experiments/ner_baseline.jsonnet")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    parser.add_argument("--amp", choices=["bf16", "fp16"], default=None,
                        help="mixed precision (trainer.amp)")
    args = parser.parse_args()

    overrides = ["trainer.progress_bar=false", f"trainer.device={args.device}",
                 *([f"trainer.amp={args.amp}"] if args.amp else [])]
    experiment = validate_experiment(load_config(args.config, overrides=overrides), args.config)
    seed = seed_everything(experiment.values)
    reader = experiment.reader.build()
    start = time.perf_counter()
    train = reader.read(experiment["train_data_path"])
    dev = reader.read(experiment["validation_data_path"])
    test = reader.read(experiment["test_data_path"])
    vocab = build_vocabulary(reader, train, experiment["vocabulary"])
    model = build_model(experiment, reader, vocab).to(trainer_device(experiment["trainer"]))
    fields = reader.fields
    train_data = index_instances(train, fields, vocab)
    dev_data = index_instances(dev, fields, vocab)
    test_data = index_instances(test, fields, vocab)
    tokens = sum(item.num_tokens for item in train_data)
    print(f"data: {os.environ.get('ELMO_DATA_DIR') or 'embedded sample'}; "
          f"{len(train_data)} train sentences, {tokens} tokens; "
          f"load+index {time.perf_counter() - start:.1f}s; threads {torch.get_num_threads()}; "
          f"device {next(model.parameters()).device}; amp {args.amp or 'none'}")
    settings = experiment["trainer"]
    optimizer = settings["optimizer"].build(parameters=list(model.parameters()))
    loader = experiment["data_loader"]
    with tempfile.TemporaryDirectory() as run_dir:
        train_loader = InstanceLoader(train_data, fields, loader, seed, train=True)
        trainer = Trainer(model, optimizer, None, train_loader, None, settings, Path(run_dir), [])
        for epoch in range(args.epochs):
            start = time.perf_counter()
            trainer.train_epoch(epoch)
            train_time = time.perf_counter() - start
            start = time.perf_counter()
            metrics = evaluate(model, InstanceLoader(dev_data, fields, loader, train=False),
                               amp=args.amp)
            eval_time = time.perf_counter() - start
            test_loader = InstanceLoader(test_data, fields, loader, train=False)
            test_f1 = evaluate(model, test_loader, amp=args.amp)["f1"]
            print(f"epoch {epoch + 1}: train {train_time:.1f}s ({tokens / train_time:,.0f} "
                  f"tokens/s), validation {eval_time:.1f}s, epoch {train_time + eval_time:.1f}s, "
                  f"dev F1 {metrics['f1']:.2f}, test F1 {test_f1:.2f}")


if __name__ == "__main__":
    main()
