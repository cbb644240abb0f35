"""Ship a pretrained biLM inside the package: float16 export, perplexities, model card, sums.

    python reproduction/bilm/ship.py RUN_DIR [--name gutenberg] [--out elmo_experiments/bilm/models]
                                      [--pins FILE]

From a finished (or interrupted) ``elmo-exp pretrain`` run: exports ``best.pt`` in float16 into
``OUT/NAME``, scores the held-out split and every evaluation split of the run's prepared corpus
with ``elmo-exp perplexity``'s code on both the float32 export and the float16 one (the stored
copy is kept only if they agree within 1e-3), and writes ``training.json`` (every figure of the
card), ``MODEL_CARD.md`` and ``SHA256SUMS``. Every number in the card comes from this script.
Last it pins the SHA-256 of every file, which the package checks whenever the biLM loads: in
``elmo_experiments/bilm/shipped_digests.py`` when OUT is the package's models folder (commit it
with the files), in ``--pins FILE`` if given; otherwise it prints the entry to pin.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import tempfile
from pathlib import Path
from typing import Any

from elmo_experiments import components
from elmo_experiments.bilm.pretrained import (
    PINS_FILE,
    SHIPPED_ROOT,
    SHIPPED_SHA256,
    folder_digests,
    render_pins,
    write_checksums,
)
from elmo_experiments.bilm.pretraining.perplexity import perplexity
from elmo_experiments.bilm.pretraining.run import export_run, validate_pretrain
from elmo_experiments.data.files import atomic_write_text

components.load()  # a script is an entry point: every component registered

ROOT = Path(__file__).resolve().parents[2]
LIMIT_BYTES = 40_000_000
TOLERANCE = 1e-3


def _splits(corpus: Path) -> list[str]:
    return ["heldout", *sorted(p.stem for p in corpus.glob("*.npy")
                               if p.stem not in ("train", "heldout", "counts"))]


def measure(run_dir: Path, out: Path) -> dict[str, Any]:
    """Export in both precisions, score every held-out split with both; keep the float16 one."""
    raw = json.loads((run_dir / "config.json").read_text())
    values = validate_pretrain(raw, str(run_dir / "config.json"))  # with every default
    config = {"corpus": values["corpus"], "data_loader": values["data_loader"],
              "trainer": {k: v for k, v in values["trainer"].items() if k != "optimizer"}
              | {"optimizer": raw["trainer"]["optimizer"]},
              "model": values["model"].params, "random_seed": values["random_seed"]}
    config["trainer"].pop("learning_rate_scheduler", None)
    config["trainer"].pop("callbacks", None)
    metrics = json.loads((run_dir / "metrics.json").read_text()) \
        if (run_dir / "metrics.json").is_file() else {}
    corpus = Path(config["corpus"].get("prepared_dir") or run_dir / "corpus")
    scores: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        full = export_run(run_dir, Path(folder) / "fp32")
        if out.exists():
            shutil.rmtree(out)
        half = export_run(run_dir, out, float16=True)
        for split in _splits(corpus):
            a = perplexity(str(full), str(corpus), split=split, progress=False)
            b = perplexity(str(half), str(corpus), split=split, progress=False)
            if abs(b["perplexity"] - a["perplexity"]) > TOLERANCE * a["perplexity"]:
                raise SystemExit(f"{split}: float16 perplexity {b['perplexity']:.4f} is not "
                                 f"within {TOLERANCE} of float32 {a['perplexity']:.4f}")
            scores[split] = {"float32": a, "float16": b}
    epochs = sorted(run_dir.glob("metrics_epoch_*.json"),
                    key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    curve = [json.loads(p.read_text()) for p in epochs]
    summary = json.loads((corpus / "summary.json").read_text())
    run = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").is_file() \
        else {}
    return {"config": config, "metrics": metrics, "perplexity": scores, "corpus": summary,
            "curve": [{"epoch": r["epoch"], "heldout_perplexity": r["validation_perplexity"],
                       "lr": r.get("lr"), "duration_s": r["duration_s"]} for r in curve],
            "training_s": sum(r["duration_s"] for r in curve),
            "code": [{"commit": session.get("code"), "started": session.get("started")}
                     for session in run.get("sessions", [])]}


def portable(value: Any, places: dict[str, str]) -> Any:
    """``value`` with this machine's folders (string prefixes, longest first) replaced by
    names, so that the shipped record names no one's file system."""
    if isinstance(value, dict):
        return {portable(k, places): portable(v, places) for k, v in value.items()}
    if isinstance(value, list):
        return [portable(v, places) for v in value]
    if isinstance(value, str):
        for prefix in sorted(places, key=len, reverse=True):
            if value.startswith(prefix):
                return places[prefix] + value[len(prefix):]
    return value


def card(name: str, record: dict[str, Any], run_dir: Path, out: Path) -> str:
    model, corpus = record["config"]["model"], record["corpus"]
    loader, trainer = record["config"]["data_loader"], record["config"]["trainer"]
    excluded = next(iter(corpus.get("excluded", {}).values()), {"documents": 0,
                                                                "characters": 0})
    options = json.loads((out / "options.json").read_text())
    vocab = len((out / "vocab.txt").read_text(encoding="utf-8").splitlines())
    sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())
             if p.is_file() and p.name != "SHA256SUMS"}
    rows = []
    for split, both in record["perplexity"].items():
        a, b = both["float32"], both["float16"]
        rows.append(f"| {split} | {a['tokens']:,} | {b['perplexity_forward']:.2f} | "
                    f"{b['perplexity_backward']:.2f} | **{b['perplexity']:.2f}** | "
                    f"{a['perplexity']:.2f} |")
    curve = " | ".join(f"{r['heldout_perplexity']:.1f}" for r in record["curve"])
    epochs = " | ".join(str(r["epoch"]) for r in record["curve"])
    best = record["metrics"].get("best_epoch", "?")
    return f"""# Model card: `{name}` biLM

A bidirectional language model in the ELMo architecture, trained by elmo-experiments on
public-domain novels and shipped inside the package: `weights: '{name}'` in an `elmo` token
embedder, `elmo-exp embed --weights {name}`, `elmo-exp perplexity {name} TEXT`. No download.

## Training data

- The 100 novels of Project Gutenberg that LitBank annotates (public domain in the USA), as raw
  text; split into sentences and tokenised with the project's spaCy rules (`format: raw`).
- **Removed first:** the 100 LitBank coreference excerpts (about 2,000 words from the start of
  each novel; {excluded['documents']} documents, {excluded['characters']:,} characters cut),
  so that LitBank stays unseen as a language-modelling text and for coreference.
- {corpus['tokens']['train']:,} training tokens, {corpus['types']:,} types; held out (model
  selection): every {record['config']['corpus']['heldout_every']}th sentence,
  {corpus['tokens']['heldout']:,} tokens. Sentences longer than
  {record['config']['corpus']['max_sentence_length']} tokens are cut into pieces.
- Licence of the text: public domain. LitBank's annotations (CC BY 4.0) were used only to find
  the excerpts to remove and to score the held-out perplexity below.

## Architecture

Character CNN (embedding {options['char_cnn']['embedding']['dim']}, filters
{options['char_cnn']['filters']}, {options['char_cnn']['n_highway']} highway layer(s)) projected
to {options['lstm']['projection_dim']}, then {options['lstm']['n_layers']} layers of LSTMs with
{options['lstm']['dim']} cells and {options['lstm']['projection_dim']}-d projections per
direction (cell and projection clip {options['lstm']['cell_clip']}, residual connection between
layers); output 2 x {options['lstm']['projection_dim']} = {2 * options['lstm']['projection_dim']}
per layer, 3 layers for the scalar mix. Softmax over {vocab:,} words (`vocab.txt`: `<S>`,
`</S>`, `<UNK>`, then the most frequent words seen at least
{record['config']['corpus']['min_count']} times), shared by both directions.

## Training

- Command: `ELMO_DATA_DIR=/path/to/data elmo-exp pretrain experiments/bilm/{name}.jsonnet -s
  {run_dir.name}` (resumed with `--recover` after interruptions), then
  `python reproduction/bilm/ship.py {run_dir.name}`.
- Joint forward and backward LM loss, sampled softmax ({model['num_samples']} samples) in
  training, exact softmax for every perplexity; dropout {model['dropout']};
  {trainer['optimizer']['type']}, lr
  {trainer['optimizer']['lr']}, halved when held-out perplexity stalls; gradient norm
  {trainer['grad_norm']}; {loader['batch_size']} sentences a batch, {loader['batches_per_epoch']}
  batches an epoch; seed {record['config']['random_seed']}; fp32 on 2 CPU cores.
- {len(record['curve'])} epochs, best epoch {best}; training time {record['training_s'] / 3600:.1f}
  h, in {len(record['code'])} session(s) resumed with `--recover`; the code of each session
  (commit, start): {'; '.join(f"`{c['commit']}` {c['started']}" for c in record['code'])}.

Held-out perplexity by epoch (average of the directions, on
{f"the first {loader['max_eval_sentences']:,}" if loader.get('max_eval_sentences') else "all"}
held-out sentences):

| epoch | {epochs} |
|---|{'---|' * len(record['curve'])}
| perplexity | {curve} |

## Perplexity (exact softmax, every held-out sentence)

As stored (float16, loaded as float32); the last column is the float32 export of the same
checkpoint. Words outside the vocabulary count as one `<UNK>` prediction, so the figures are
not comparable with perplexities over other vocabularies.

| text | tokens | forward | backward | average | float32 |
|---|---|---|---|---|---|
{chr(10).join(rows)}

`heldout` is every {record['config']['corpus']['heldout_every']}th sentence of the training
novels; `litbank` is the 100 LitBank excerpts (never trained on). Reproduce:
`elmo-exp perplexity {name} DATA/coref_litbank/conll --format conll2012` (and, for the held-out
split, the run's prepared corpus folder instead of a text).

## Files

{chr(10).join(f"- `{n}`: {s:,} bytes" for n, s in sizes.items())}
- `SHA256SUMS`, checked whenever the biLM is loaded. Arrays are stored in float16 and upcast to
  float32 on loading.

## Intended use and limits

Contextual word vectors for English research on the CPU: 19th- and early 20th-century fiction is
its whole world, so expect weaker vectors on news, science or social media than the released
ELMo models give (trained on the 1B Word Benchmark, 800M words). Trained on single sentences:
use `state: 'stateless'`.
"""


def update_pins(folder: Path, pins_file: Path | None) -> None:
    """Pin the SHA-256 of ``folder``'s files under its name in ``pins_file`` (a
    ``shipped_digests.py``, the other biLMs' pins kept), or print the entry when None."""
    pinned = {folder.name: folder_digests(folder)}
    if pins_file is None:
        print(f"{folder}: to ship it, pin its digests in {PINS_FILE} (or rerun with --out "
              f"{SHIPPED_ROOT}):\n{render_pins(pinned)}")
        return
    current = runpy.run_path(str(pins_file))["SHIPPED_SHA256"] if pins_file.is_file() \
        else SHIPPED_SHA256
    atomic_write_text(pins_file, render_pins({**current, **pinned}))
    print(f"{pins_file}: pinned the SHA-256 of the {len(pinned[folder.name])} files of "
          f"{folder.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--name", default="gutenberg")
    parser.add_argument("--out", type=Path, default=ROOT / "elmo_experiments/bilm/models")
    parser.add_argument("--pins", type=Path, default=None,
                        help="the shipped_digests.py to pin the files' SHA-256 in (default: the "
                        "package's, when --out is the package's models folder)")
    args = parser.parse_args()
    out = args.out / args.name
    record = measure(args.run_dir, out)
    places = {str(args.run_dir.resolve()): args.run_dir.name, str(args.run_dir): args.run_dir.name}
    if os.environ.get("ELMO_DATA_DIR"):
        places[str(Path(os.environ["ELMO_DATA_DIR"]).resolve())] = "$ELMO_DATA_DIR"
        places[os.environ["ELMO_DATA_DIR"].rstrip("/")] = "$ELMO_DATA_DIR"
    prepared = record["config"]["corpus"].get("prepared_dir")
    if prepared:
        places[str(prepared)] = "$ELMO_PREPARED_CORPUS"
    record = portable(record, places)
    atomic_write_text(out / "training.json", json.dumps(record, indent=1) + "\n")
    atomic_write_text(out / "MODEL_CARD.md", card(args.name, record, args.run_dir, out))
    write_checksums(out)
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"{out}: {total:,} bytes in all (limit {LIMIT_BYTES:,})")
    if total > LIMIT_BYTES:
        raise SystemExit(f"{out}: {total:,} bytes is over the {LIMIT_BYTES:,}-byte limit")
    package_models = args.out.resolve() == SHIPPED_ROOT.resolve()
    update_pins(out, args.pins or (PINS_FILE if package_models else None))


if __name__ == "__main__":
    main()
