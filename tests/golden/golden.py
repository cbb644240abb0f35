"""The golden guard: per-epoch training losses and validation metrics of every shipped task
config, 3 epochs on the embedded samples, fixed seed, one thread, ELMo from a fixed tiny random
biLM. ``golden.json`` holds them as the code produced them before the framework refactor
(SQuAD's, SRL's, coref's: when added), with one change on purpose since: the NER taggers'
tag accuracy is counted in the data's own scheme (IOB1, as conlleval counts it), which moved
``training_accuracy`` of the two NER records and nothing else; ``test_golden.py`` checks that
today's code reproduces them (1e-5).

    python tests/golden/golden.py --write      # regenerate golden.json (only on purpose)
    python tests/golden/golden.py --add NAME   # record a newly added config only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden.json")
OVERRIDES = ["trainer.num_epochs=3", "trainer.patience=null", "trainer.progress_bar=false"]
SMALL, LARGE = "data_loader.batch_size=8", "data_loader.batch_size=64"  # SST: ~2,000 phrases
# name -> (config, environment the config reads, batch size)
CONFIGS: dict[str, tuple[str, dict[str, str], str]] = {
    "ner_baseline": ("ner_baseline.jsonnet", {}, SMALL),
    "ner": ("ner.jsonnet", {}, SMALL),
    "sst5_baseline": ("sst5_baseline.jsonnet", {}, LARGE),
    "sst5": ("sst5.jsonnet", {}, LARGE),
    "sst5_baseline_cpu": ("sst5_baseline.jsonnet", {"ELMO_SIZE": "cpu"}, LARGE),
    "sst5_cpu": ("sst5.jsonnet", {"ELMO_SIZE": "cpu"}, LARGE),
    "snli_baseline": ("snli_baseline.jsonnet", {}, SMALL),
    "snli": ("snli.jsonnet", {}, SMALL),
    "snli_baseline_cpu": ("snli_baseline.jsonnet", {"ELMO_SIZE": "cpu"}, SMALL),
    "snli_cpu": ("snli.jsonnet", {"ELMO_SIZE": "cpu"}, SMALL),
    "squad_baseline": ("squad_baseline.jsonnet", {}, SMALL),
    "squad": ("squad.jsonnet", {}, SMALL),
    "squad_baseline_cpu": ("squad_baseline.jsonnet", {"ELMO_SIZE": "cpu"}, SMALL),
    "squad_cpu": ("squad.jsonnet", {"ELMO_SIZE": "cpu"}, SMALL),
    "srl_baseline": ("srl_baseline.jsonnet", {}, SMALL),
    "srl": ("srl.jsonnet", {}, SMALL),
    "srl_baseline_cpu": ("srl_baseline.jsonnet", {"ELMO_SIZE": "cpu"}, SMALL),
    "srl_cpu": ("srl.jsonnet", {"ELMO_SIZE": "cpu"}, SMALL),
    "coref_baseline": ("coref_baseline.jsonnet", {}, "data_loader.batch_size=1"),
    "coref": ("coref.jsonnet", {}, "data_loader.batch_size=1"),
    "coref_baseline_cpu": ("coref_baseline.jsonnet", {"ELMO_SIZE": "cpu"},
                           "data_loader.batch_size=1"),
    "coref_cpu": ("coref.jsonnet", {"ELMO_SIZE": "cpu"}, "data_loader.batch_size=1"),
}
UNTIMED = ("duration_s", "training_tokens_per_s")
# figures the refactor added beside the guarded ones (they move no guarded number):
# NER's dataset-level conlleval metric, scored from the official input format
ADDED = ("validation_conlleval_",)


@contextmanager
def _environment(values: dict[str, str]):  # type: ignore[no-untyped-def]
    saved = {k: os.environ.get(k) for k in [*values, "ELMO_DATA_DIR"]}
    os.environ.pop("ELMO_DATA_DIR", None)
    os.environ.update(values)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(name: str) -> list[dict[str, Any]]:
    """Per-epoch records (without timings) of one shipped config on the embedded samples."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_models import TINY

    from elmo_experiments.bilm.weights import write_random_weights
    from elmo_experiments.run import train

    config, env, batch_size = CONFIGS[name]
    with tempfile.TemporaryDirectory() as folder:
        bilm = write_random_weights(Path(folder) / "bilm", TINY, seed=0)
        with _environment({**env, "ELMO_WEIGHTS": str(bilm)}):
            train(ROOT / "experiments" / config, Path(folder) / "run",
                  overrides=[*OVERRIDES, batch_size])
        records = []
        for epoch in range(1, 4):
            record = json.loads((Path(folder) / "run" / f"metrics_epoch_{epoch}.json").read_text())
            records.append({k: v for k, v in record.items()
                            if k not in UNTIMED and isinstance(v, (int, float))})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate golden.json")
    parser.add_argument("--add", nargs="+", default=[], choices=sorted(CONFIGS),
                        help="record these (new) configs, keeping every other record")
    args = parser.parse_args()
    if args.add:
        records = json.loads(GOLDEN.read_text())
        records.update({name: run(name) for name in args.add})
        GOLDEN.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
        print(f"added {', '.join(args.add)} to {GOLDEN}")
        return
    results = {name: run(name) for name in CONFIGS}
    if args.write:
        GOLDEN.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN}")
    else:
        print(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
