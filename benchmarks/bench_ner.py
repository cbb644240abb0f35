"""Seconds per epoch and tokens/s of the NER baseline (CoNLL-2003 with ELMO_DATA_DIR, else sample).

    python benchmarks/bench_ner.py [--epochs 1] [--batches N] [--profile]

Prints the figures; compare with the reference point in tasks/ner/README.md. Not a test.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from elmo_experiments.config.experiment import validate_experiment
from elmo_experiments.config.loader import load_config
from elmo_experiments.data.batching import index_instances, iterate_batches
from elmo_experiments.run import build_model, build_vocabulary, seed_everything
from elmo_experiments.training.trainer import evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="experiments/ner_baseline.jsonnet")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batches", type=int, default=None, help="stop each epoch early")
    parser.add_argument("--profile", action="store_true", help="print a torch profiler table")
    args = parser.parse_args()

    experiment = validate_experiment(load_config(args.config), args.config)
    seed = seed_everything(experiment.values)
    reader = experiment.reader.build()
    start = time.perf_counter()
    train = reader.read(experiment["train_data_path"])
    dev = reader.read(experiment["validation_data_path"])
    vocab = build_vocabulary(reader, train, experiment["vocabulary"])
    model = build_model(experiment, reader, vocab)
    indexers = reader.token_indexers
    train_data = index_instances(train, indexers, vocab)
    dev_data = index_instances(dev, indexers, vocab)
    print(f"data: {os.environ.get('ELMO_DATA_DIR') or 'embedded sample'}; "
          f"{len(train_data)} train sentences; load+index {time.perf_counter() - start:.1f}s; "
          f"threads {torch.get_num_threads()}")
    loader = experiment["data_loader"]
    optimizer = experiment["trainer"]["optimizer"].build(parameters=list(model.parameters()))
    for epoch in range(args.epochs):
        model.train()
        tokens = 0
        start = time.perf_counter()
        profiler = torch.profiler.profile() if args.profile else None
        if profiler:
            profiler.__enter__()
        for index, batch in enumerate(iterate_batches(train_data, indexers, loader,
                                                      seed=seed * 1000 + epoch, train=True)):
            if args.batches is not None and index >= args.batches:
                break
            optimizer.zero_grad(set_to_none=True)
            loss = model(**batch)["loss"] / batch["mask"].shape[0]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            model.get_metrics(reset=False)
            tokens += int(batch["mask"].sum())
        train_time = time.perf_counter() - start
        if profiler:
            profiler.__exit__(None, None, None)
            print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
        start = time.perf_counter()
        metrics = evaluate(model, dev_data, indexers, loader)
        eval_time = time.perf_counter() - start
        print(f"epoch {epoch + 1}: train {train_time:.1f}s ({tokens / train_time:,.0f} tokens/s), "
              f"validation {eval_time:.1f}s, epoch total {train_time + eval_time:.1f}s, "
              f"dev F1 {metrics['f1']:.2f}")


if __name__ == "__main__":
    main()
