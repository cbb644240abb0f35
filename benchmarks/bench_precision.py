"""What bf16 costs in accuracy: biLM activations, a pretraining curve, NER F1, each against fp32.

    python benchmarks/bench_precision.py [--weights DIR_OR_NAME] [--epochs 6] [--ner-epochs 10]

1. biLM activations: every layer of the biLM (``--weights``; default a random biLM of the
   gutenberg architecture) on the embedded sample story, run in fp32 and wholly in bf16
   (``precision: bf16``): mean |bf16 - fp32| over the mean |fp32|, and the largest difference.
2. Pretraining: the tiny config on the embedded corpus, fp32 and ``trainer.amp: bf16``,
   held-out perplexity after each epoch.
3. NER: the baseline BiLSTM-CRF on the embedded sample (or the real CoNLL-2003 with
   ``ELMO_DATA_DIR``), fp32 and ``trainer.amp: bf16``, dev and test F1.
Figures only; on a CPU without bf16 matrix units bf16 is emulated (slow, same numerics).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import torch

from elmo_experiments import components
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm, write_random_weights
from elmo_experiments.config.loader import load_config
from elmo_experiments.precision import FORCE_BF16, native_bf16

components.load()  # a script is an entry point: every component registered

os.environ.setdefault(FORCE_BF16, "1")  # bf16 measured as asked, also where it is emulated
ROOT = Path(__file__).resolve().parents[1]
PRECISIONS = ("fp32", "bf16")


def activations(weights: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        if weights is None:
            model = load_config(ROOT / "experiments/bilm/gutenberg.jsonnet")["model"]
            options = BilmOptions(
                cell_dim=model["cell_dim"], projection_dim=model["projection_dim"],
                n_highway=model["n_highway"], char_embedding_dim=model["char_embedding_dim"],
                filters=tuple(tuple(f) for f in model["filters"]))
            weights = str(write_random_weights(folder, options, seed=0))
            name = "random gutenberg-architecture biLM"
        else:
            name = weights
        options_file, weight_file = resolve_weights(weights)
        lines = (ROOT / "reproduction/bilm/sample/story.txt").read_text().split("\n\n")
        sentences = [p.split()[:40] for p in lines if p.split()][:32]
        ids = batch_to_ids(sentences)
        layers = {}
        for precision in PRECISIONS:
            runner = BilmRunner(load_bilm(options_file, weight_file), precision=precision)
            with torch.no_grad():
                layers[precision], mask = runner(ids)
    print(f"biLM activations, {name}, {int(mask.sum())} tokens: bf16 against fp32")
    for index, (low, full) in enumerate(zip(layers["bf16"], layers["fp32"], strict=True)):
        low, full = low[mask], full[mask]
        relative = float((low - full).abs().mean() / full.abs().mean())
        print(f"  layer {index}: mean |difference| = {relative:.4%} of mean |activation|, "
              f"largest difference {float((low - full).abs().max()):.4f} "
              f"(activations up to {float(full.abs().max()):.2f})")


def pretraining(epochs: int) -> None:
    from elmo_experiments.bilm.pretraining.run import pretrain

    curves = {}
    overrides = ["trainer.progress_bar=false", f"trainer.num_epochs={epochs}"]
    with tempfile.TemporaryDirectory() as folder:
        for precision in PRECISIONS:
            amp = [] if precision == "fp32" else ["trainer.amp=bf16"]
            pretrain(ROOT / "experiments/bilm/tiny.jsonnet", Path(folder) / precision,
                     overrides=[*overrides, *amp])
            curves[precision] = [
                load_config(Path(folder) / precision / f"metrics_epoch_{e}.json")[
                    "validation_perplexity"] for e in range(1, epochs + 1)]
    print("pretraining, tiny config on the embedded corpus: held-out perplexity per epoch")
    for precision, curve in curves.items():
        print(f"  {precision}: " + "  ".join(f"{p:.2f}" for p in curve))


def ner(epochs: int) -> None:
    from elmo_experiments.run import train

    print("NER baseline (BiLSTM-CRF): dev / test span F1")
    overrides = ["trainer.progress_bar=false", f"trainer.num_epochs={epochs}"]
    with tempfile.TemporaryDirectory() as folder:
        for precision in PRECISIONS:
            amp = [] if precision == "fp32" else ["trainer.amp=bf16"]
            metrics = train(ROOT / "experiments/ner_baseline.jsonnet", Path(folder) / precision,
                            overrides=[*overrides, *amp])
            print(f"  {precision}: dev {metrics['best_validation_f1']:.2f}"  # already in %
                  f" / test {metrics.get('test_f1', float('nan')):.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=None)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--ner-epochs", type=int, default=10, help="0 skips NER")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"CPU capability {torch.backends.cpu.get_cpu_capability()}, native bf16 matrix "
          f"units: {native_bf16()}")
    activations(args.weights)
    pretraining(args.epochs)
    if args.ner_epochs:
        ner(args.ner_epochs)


if __name__ == "__main__":
    main()
