"""A sweep's summary: per cell group (variant, data fraction), mean ± std and n of each metric
over seeds, with what produced the runs (commands, commit, biLM digests)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import read_json
from elmo_experiments.sweeps.execute import cell_dir, finished
from elmo_experiments.sweeps.spec import Sweep, cell_settings
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


def summarize(sweep: Sweep, root: Path, statuses: list[dict[str, Any]],
              command: str) -> dict[str, Any]:
    """Write and return ``ROOT/summary.json``."""
    from elmo_experiments.version import code_version

    groups: dict[tuple[str, float], list[tuple[int, dict[str, Any], dict[str, Any]]]] = {}
    for cell in sweep.cells:
        run_dir = cell_dir(root, cell)
        if finished(run_dir):
            record = read_json(run_dir / "run.json") if (run_dir / "run.json").is_file() else {}
            groups.setdefault((cell.variant, cell.fraction), []).append(
                (cell.seed, read_json(run_dir / "metrics.json"), record))
    rows = []
    for (variant, fraction), runs in groups.items():
        names = sweep.metrics or _default_metrics(runs[0][1])
        figures = {}
        for name in names:
            values = [float(m[name]) for _, m, _ in runs
                      if isinstance(m.get(name), int | float) and math.isfinite(m[name])]
            if values:
                figures[name] = stats(values)
        bilms = sorted({b["sha1"] for _, _, r in runs for b in r.get("bilm", [])})
        vectors = sorted({v["sha1"] for _, _, r in runs for v in r.get("vectors", [])})
        rows.append({"variant": variant, "fraction": fraction,
                     "seeds": sorted(s for s, _, _ in runs), "metrics": figures,
                     "bilm_sha1": bilms, "vectors_sha1": vectors,
                     "elmo_mixes": mean_mixes([m for _, m, _ in runs]),
                     "embedded_sample": any((m.get("data") or {}).get("embedded_sample")
                                            for _, m, _ in runs),
                     "commits": sorted({m.get("code", "") for _, m, _ in runs})})
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
                   **{k: s[k] for k in ("error", "attempts") if k in s}}
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
    names = sorted({n for row in summary["groups"] for n in row["metrics"]})
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
    failed = [c for c in summary["cells"] if c["status"] in ("failed", "interrupted")]
    lines += [f"\n{c['name']}: {c['status']} ({c.get('error', '')})" for c in failed]
    return "\n".join(lines) + "\n"
