"""A sweep's summary: per cell group (variant, data fraction), mean ± std and n of each metric
over seeds, with what produced the runs (commands, commit, biLM digests)."""

from __future__ import annotations

import math
import os
import statistics
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import read_json
from elmo_experiments.errors import ConfigError
from elmo_experiments.sweeps.execute import PROBLEMS, cell_dir, finished
from elmo_experiments.sweeps.spec import Sweep, cell_name, cell_settings
from elmo_experiments.training.run_dir import write_json

SUMMARY_FILE = "summary.json"


def _default_metrics(metrics: dict[str, Any]) -> list[str]:
    return sorted(k for k, v in metrics.items() if isinstance(v, int | float)
                  and not isinstance(v, bool) and k.startswith(("test_", "best_validation_"))
                  and "-" not in k)


def stats(values: list[float]) -> dict[str, Any]:
    """Mean, sample standard deviation (0 for one value) and n."""
    return {"mean": statistics.fmean(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "n": len(values), "values": values}


def mean_mixes(runs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per embedder and placement, the learned layer weights and γ averaged over the runs."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, mixes in (runs[0].get("elmo_mixes") or {}).items():
        every = [r["elmo_mixes"][name] for r in runs if name in (r.get("elmo_mixes") or {})]
        found[name] = [{"weights": [statistics.fmean(m[i]["weights"][j] for m in every)
                                    for j in range(len(mix["weights"]))],
                        "gamma": statistics.fmean(m[i]["gamma"] for m in every), "n": len(every)}
                       for i, mix in enumerate(mixes)]
    return found


def portable(text: str) -> str:
    """``text`` with this machine's data folder written as ``$ELMO_DATA_DIR`` (a committed
    summary names no machine's folders)."""
    data_dir = os.environ.get("ELMO_DATA_DIR")
    return text.replace(data_dir.rstrip("/"), "$ELMO_DATA_DIR") if data_dir else text


DEFAULT_PATIENCE = 3  # the convergence rule's window where a run had no early stopping


def run_entry(metrics: dict[str, Any], record: dict[str, Any], names: list[str],
              trainer: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a summary keeps of one finished run (enough to summarise it again without its
    run directory): the summarised metrics, learned mixes, code, biLM and vectors digests, and
    (from its ``trainer`` settings) its best epoch, epochs run, epoch cap and patience."""
    entry = {"metrics": {n: metrics[n] for n in names if isinstance(metrics.get(n), int | float)
                         and not isinstance(metrics[n], bool)},
             "elmo_mixes": metrics.get("elmo_mixes") or {}, "code": metrics.get("code", ""),
             "bilm_sha1": sorted({b["sha1"] for b in record.get("bilm", [])}),
             "vectors_sha1": sorted({v["sha1"] for v in record.get("vectors", [])}),
             "embedded_sample": bool((metrics.get("data") or {}).get("embedded_sample"))}
    if trainer and isinstance(metrics.get("best_epoch"), int):
        entry["epochs"] = {"best": metrics["best_epoch"], "run": metrics.get("epochs_completed"),
                           "cap": trainer.get("num_epochs"), "patience": trainer.get("patience")}
    return entry


def converged(entry: dict[str, Any]) -> bool | None:
    """The convergence rule: a run converged unless its best epoch lies within ``patience``
    epochs of its ``num_epochs`` cap (it may still have been improving when the cap stopped
    it); ``patience`` 3 where the run had none. None: the entry does not say (older summaries)."""
    epochs = entry.get("epochs")
    if not epochs or not isinstance(epochs.get("cap"), int):
        return None
    patience = epochs.get("patience") or DEFAULT_PATIENCE
    return epochs["best"] <= epochs["cap"] - patience


def previous_runs(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Cell name -> run entry of an earlier summary's finished cells: its cells' own entries,
    or, in a summary written before they were kept, rebuilt seed by seed from its groups (a
    metric whose values do not cover every seed is left out)."""
    found = {c["name"]: c["run"] for c in summary.get("cells", []) if "run" in c}
    for group in summary.get("groups", []):
        if "same_as" in group:
            continue
        seeds = group["seeds"]
        for i, seed in enumerate(seeds):
            found.setdefault(cell_name(group["variant"], group["fraction"], seed), {
                "metrics": {k: f["values"][i] for k, f in group["metrics"].items()
                            if len(f.get("values", [])) == len(seeds)},
                "elmo_mixes": {k: [{"weights": m["weights"], "gamma": m["gamma"]} for m in v]
                               for k, v in group.get("elmo_mixes", {}).items()},
                "code": ",".join(group.get("commits", [])),
                "bilm_sha1": group.get("bilm_sha1", []),
                "vectors_sha1": group.get("vectors_sha1", []),
                "embedded_sample": bool(group.get("embedded_sample"))})
    return found


def check_previous(summary: dict[str, Any], sweep: Sweep, source: str) -> None:
    """A ``ConfigError`` naming every cell that the earlier summary ran with other overrides,
    ext vars or config file than this spec gives it, or that belongs to another sweep."""
    problems = [] if summary.get("sweep") == sweep.name else [
        f"it is the summary of sweep {summary.get('sweep')!r}, not {sweep.name!r}"]
    mine = {c.name: c for c in sweep.cells}
    for cell in summary.get("cells", []):
        ours = mine.get(cell["name"])
        if ours is None or cell.get("status") in ("not run", "unfinished", "shared", "changed",
                                                  "busy"):
            continue
        if (list(ours.overrides), dict(ours.ext_vars), Path(ours.config).name) != (
                cell["overrides"], cell["ext_vars"], Path(cell["config"]).name):
            problems.append(f"cell {cell['name']}: ran with other settings than the spec's")
    if problems:
        raise ConfigError(problems, source=source)


def summarize(sweep: Sweep, root: Path, statuses: list[dict[str, Any]], command: str,
              previous: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Write and return ``ROOT/summary.json``. ``previous``: run entries (``previous_runs``)
    of cells finished elsewhere whose run directories are not here."""
    from elmo_experiments.version import code_version

    previous = previous or {}
    entries: dict[str, dict[str, Any]] = {}
    groups: dict[tuple[str, float], list[tuple[int, dict[str, Any]]]] = {}
    for cell in sweep.cells:
        run_dir = cell_dir(root, cell)
        if finished(cell, run_dir):
            record = read_json(run_dir / "run.json") if (run_dir / "run.json").is_file() else {}
            metrics = read_json(run_dir / "metrics.json")
            config = read_json(run_dir / "config.json") if (run_dir / "config.json").is_file() \
                else {}
            entries[cell.name] = run_entry(metrics, record,
                                           sweep.metrics or _default_metrics(metrics),
                                           config.get("trainer"))
        elif cell.name in previous and not cell.same_as:
            entries[cell.name] = previous[cell.name]
        if cell.name in entries:
            groups.setdefault((cell.variant, cell.fraction), []).append(
                (cell.seed, entries[cell.name]))
    rows = []
    for (variant, fraction), runs in groups.items():
        names = list(dict.fromkeys(n for _, e in runs for n in e["metrics"]))
        figures = {}
        for name in names:
            values = [float(e["metrics"][name]) for _, e in runs
                      if name in e["metrics"] and math.isfinite(e["metrics"][name])]
            if values:
                figures[name] = stats(values)
        rows.append({"variant": variant, "fraction": fraction,
                     "seeds": sorted(s for s, _ in runs), "metrics": figures,
                     "bilm_sha1": sorted({d for _, e in runs for d in e["bilm_sha1"]}),
                     "vectors_sha1": sorted({d for _, e in runs for d in e["vectors_sha1"]}),
                     "elmo_mixes": mean_mixes([e for _, e in runs]),
                     "embedded_sample": any(e["embedded_sample"] for _, e in runs),
                     "commits": sorted({e["code"] for _, e in runs}),
                     "not_converged": sorted(seed for seed, e in runs if converged(e) is False)})
    shared: dict[tuple[str, float], dict[str, Any]] = {}
    for cell in sweep.cells:  # another sweep's runs: the tables look them up there
        if cell.same_as:
            group = shared.setdefault((cell.variant, cell.fraction), {
                "variant": cell.variant, "fraction": cell.fraction, "same_as": cell.same_as,
                "seeds": []})
            group["seeds"].append(cell.seed)
    summary = {
        "sweep": sweep.name, "command": command, "code": code_version(),
        "cells": [{**cell_settings(c), "name": c.name, "status": s["status"],
                   **({"error": portable(s["error"])} if "error" in s else {}),
                   **{k: s[k] for k in ("attempts",) if k in s},
                   **({"run": entries[c.name]} if c.name in entries else {})}
                  for c, s in zip(sweep.cells, statuses, strict=True)],
        "groups": rows + list(shared.values()),
    }
    write_json(root / SUMMARY_FILE, summary)
    return summary


def mean_std(figure: dict[str, Any]) -> str:
    """``mean ± std (n)`` of a summary figure; one run has no spread: ``mean (1)``."""
    if figure["n"] == 1:
        return f"{figure['mean']:.2f} (1)"
    return f"{figure['mean']:.2f} ± {figure['std']:.2f} ({figure['n']})"


def render(summary: dict[str, Any]) -> str:
    """A markdown table: one row per group, one column per metric (mean ± std (n))."""
    names = sorted({n for row in summary["groups"] for n in row.get("metrics", {})})
    lines = [f"| variant | fraction | {' | '.join(names)} |",
             "|---|---|" + "---|" * len(names)]
    for row in summary["groups"]:
        if "same_as" in row:
            lines.append(f"| {row['variant']} | {row['fraction']:g} | "
                         f"{' | '.join(['see ' + row['same_as']] * max(1, len(names)))} |")
            continue
        cells = []
        for name in names:
            figure = row["metrics"].get(name)
            cells.append(mean_std(figure) if figure else "")
        lines.append(f"| {row['variant']} | {row['fraction']:g} | {' | '.join(cells)} |")
    failed = [c for c in summary["cells"] if c["status"] in PROBLEMS]
    lines += [f"\n{c['name']}: {c['status']} ({c.get('error', '')})" for c in failed]
    return "\n".join(lines) + "\n"
