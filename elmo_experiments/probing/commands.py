"""What the ``probe pos``, ``probe wsd`` and ``neighbours`` commands do, minus click."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from elmo_experiments.data.download import data_root as resolve_root
from elmo_experiments.errors import DataError


def provenance(weights: str) -> dict[str, Any]:
    """What produced a probe's results: the command, the code, and the representation's digest
    (a biLM's SHA-1 over its two files; a transformer's name and package version)."""
    import sys

    from elmo_experiments.version import code_version

    record: dict[str, Any] = {"command": " ".join(["elmo-exp", *sys.argv[1:]]),
                              "code": code_version()}
    if weights.startswith("transformer:"):
        from importlib.metadata import PackageNotFoundError, version

        name = weights.split(":", 1)[1]
        try:
            record["transformer_version"] = version(name)
        except PackageNotFoundError:
            record["transformer_version"] = None  # a local model folder
    else:
        from elmo_experiments.bilm.pretrained import resolve_bilm
        from elmo_experiments.bilm.weights import weights_digest

        record["bilm_sha1"] = weights_digest(*resolve_bilm(weights))
    return record


def _write(out: str | None, results: dict[str, Any]) -> str:
    if out is None:
        return ""
    from elmo_experiments.data.files import atomic_write

    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    results = {**results, "provenance": provenance(str(results.get("weights", "")))}
    text = json.dumps(results, indent=2, sort_keys=True) + "\n"
    atomic_write(str(path), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return f"\nresults: {path}"


def pos_command(weights: str, data: str, tagset: str, data_root: str | None, out: str | None,
                epochs: int = 10, seed: int = 0, device: str = "cpu") -> str:
    """Runs the POS probe; the table (and where the JSON went)."""
    from elmo_experiments.probing.pos import ProbeSettings, format_results, run_pos_probe
    from elmo_experiments.probing.pos_data import load_pos

    splits = load_pos(data, resolve_root(data_root), tagset)
    results = run_pos_probe(weights, splits, ProbeSettings(epochs=epochs, seed=seed), device,
                            progress=True)
    results.update({"data": data, "tagset": tagset, "seed": seed})
    header = f"POS probe, {data} ({tagset}), accuracy (%) of a linear classifier per layer"
    return header + "\n" + format_results(results) + _write(out, results)


def wsd_command(weights: str, eval_sets: list[str], data_root: str | None,
                wordnet_dir: str | None, out: str | None, device: str = "cpu") -> str:
    """Runs the WSD probe; the table (and where the JSON went)."""
    from elmo_experiments.probing.raganato import EVAL_SETS
    from elmo_experiments.probing.wordnet import FirstSense, load_wordnet
    from elmo_experiments.probing.wsd import format_results, run_wsd_probe

    unknown = [name for name in eval_sets if name not in EVAL_SETS]
    if unknown:
        raise DataError(f"evaluation set {unknown[0]!r} is not one of {EVAL_SETS}")
    first_sense = FirstSense(load_wordnet(wordnet_dir))
    results = run_wsd_probe(weights, resolve_root(data_root), eval_sets, first_sense, device,
                            progress=True)
    header = ("WSD probe: nearest mean SemCor sense per layer, WordNet first sense when SemCor "
              "lacks the lemma; F1 (%)")
    return header + "\n" + format_results(results) + _write(out, results)


def neighbours_command(word: str, sentence: str | None, weights: str, vectors: str | None,
                       k: int, data_root: str | None, device: str = "cpu") -> str:
    """Table 4 for ``word`` in ``sentence`` (default: the word alone)."""
    from elmo_experiments.probing.neighbours import (
        format_neighbours,
        nearest_in_context,
        nearest_static,
        read_static_vectors,
    )
    from elmo_experiments.probing.semcor import SEMCOR, read_semcor

    tokens = sentence.split() if sentence else [word]
    corpus = read_semcor(resolve_root(data_root) / SEMCOR)
    found = nearest_in_context(weights, word, tokens, corpus, k, device)
    static = None
    if vectors is not None:
        static = nearest_static(word, *read_static_vectors(vectors), k=k)
    return format_neighbours(word, tokens, found, static)
