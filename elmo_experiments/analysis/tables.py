"""``elmo-exp tables``: the paper's Tables 1-3, 5 and 6 as markdown, our mean ± std (n) over
seeds beside the paper's figures, from sweep summaries and probe results (``results/*.json``
or a sweeps folder); Figures 1 (sample efficiency) and 2 (learned layer weights) from the same
summaries.

A sweep's name says what it holds: ``<task>_main`` (Table 1: baseline, elmo), ``<task>_layers``
(Table 2), ``<task>_placement`` (Table 3), ``<task>_fractions`` (Figure 1). The paper's figures
come from ``reproduction/<task>/expected.json``; the tasks are ``elmo_experiments/tasks/``'s
folders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.analysis.significance import (
    TOO_FEW,
    render_difference,
    render_paired,
    versus_best,
)
from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.data.files import atomic_write, read_json
from elmo_experiments.errors import DataError
from elmo_experiments.sweeps.spec import cell_name
from elmo_experiments.sweeps.summary import mean_std, previous_runs

# the command that measures it (a results file made before reproduction/ was called tasks/
# records the script's old path)
FINETUNING_SCRIPT = "python reproduction/bilm/finetuning.py"
FINETUNED = "elmo_finetuned"  # Table 1's variant with the biLM fine-tuned on the task's text
# Table 1's variants; any other variant of a main sweep is a further lever (its own table)
MAIN_VARIANTS = ("baseline", "elmo", FINETUNED, "transformer")
COLUMNS = {
    "table2": ("layers", ["baseline", "last", "lambda1", "lambda0.001"],
               ["baseline", "last layer only", "all layers, λ = 1", "all layers, λ = 0.001"]),
    "table3": ("placement", ["input", "input_output", "output"],
               ["input only", "input and output", "output only"]),
}


PAPER_PROBES = {  # the paper's Tables 5 and 6: biLM layers 1 and 2 (and the reference)
    "wsd": {"1": 67.4, "2": 69.0, "reference": "WordNet first sense 65.9"},
    "pos": {"1": 97.3, "2": 96.8, "reference": "PTB WSJ test"},
}
PAPER_PROBE_LAYERS = 3  # the paper's biLM: layer 0 (char CNN, not reported), 1 and 2


def load_results(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Sweep name -> summary, from every ``*.json`` summary under ``folder``; probe results
    (``elmo-exp probe ... --out``) under ``probe:wsd:<file>`` and ``probe:pos:<file>``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder of sweep summaries")
    found = {}
    for path in sorted(folder.rglob("*.json")):
        data = read_json(path)
        if isinstance(data, dict) and "sweep" in data and "groups" in data:
            found[data["sweep"]] = with_seeds(data)
        elif isinstance(data, dict) and "sets" in data:
            found[f"probe:wsd:{path.stem}"] = data
        elif isinstance(data, dict) and "tagset" in data and "layers" in data:
            found[f"probe:pos:{path.stem}"] = data
        elif isinstance(data, dict) and data.get("kind") == "bilm_finetuning":
            found["bilm_finetuning"] = data
        elif isinstance(data, dict) and data.get("kind") == "bilm_continued":
            found[f"bilm_continued:{path.stem}"] = data
        elif isinstance(data, dict) and "bootstrap" in data and "a" in data and "b" in data:
            found[f"bootstrap:{path.stem}"] = data
    return resolve_shared(found)


def _probe_row(probe: str, representation: str, figures: dict[int, float], layers: int,
               reference: str) -> str:
    """One row: layers 0-2, the further layers, the best layer (figure, index of N), the
    reference. ``figures``: layer -> figure (layers not reported are absent)."""
    cells = [f"{figures[j]:.1f}" if j in figures else "—" for j in range(3)]
    further = ", ".join(f"{j}: {figures[j]:.1f}" for j in sorted(figures) if j >= 3)
    best = max(sorted(figures), key=lambda j: figures[j], default=None)  # ties: lower layer
    best_cell = "—" if best is None else f"{figures[best]:.1f} ({best} of {layers})"
    return (f"| {probe} | {representation} | {' | '.join(cells)} | {further} | {best_cell} | "
            f"{reference} |")


def _layer_figures(layers: dict[str, Any], figure: Callable[[Any], float]
                   ) -> dict[int, float]:
    """Layer index -> ``figure(row)`` for every numbered layer of a probe's results."""
    return {int(j): float(figure(row)) for j, row in layers.items() if str(j).isdigit()}


def probes(results: dict[str, dict[str, Any]]) -> list[str]:
    """Tables 5 (WSD F1 on Raganato's ALL) and 6 (POS test accuracy), per layer of each probed
    representation (a biLM, or a transformer's embedding layer and N-1 transformer layers),
    with its best layer so that representations of any depth compare."""
    wsd, pos = "WSD F1, ALL (Table 5)", "POS accuracy (Table 6)"
    lines = ["| probe | representation | layer 0 | layer 1 | layer 2 | layers 3+ | "
             "best layer (of N) | reference |", "|---|---|---|---|---|---|---|---|"]
    paper = {name: {int(j): v for j, v in PAPER_PROBES[name].items() if j.isdigit()}
             for name in ("wsd", "pos")}
    lines.append(_probe_row(wsd, "paper (biLM)", paper["wsd"], PAPER_PROBE_LAYERS,
                            str(PAPER_PROBES["wsd"]["reference"])))
    for name, data in sorted(results.items()):
        if name.startswith("probe:wsd:") and "ALL" in data["sets"]:
            row = data["sets"]["ALL"]
            first = row.get("first_sense", {}).get("f1")
            lines.append(_probe_row(wsd, data.get("weights", "?"),
                                    _layer_figures(row["layers"], lambda r: r["f1"]),
                                    len(row["layers"]),
                                    f"first sense {first:.1f}" if first else ""))
    lines.append(_probe_row(pos, "paper (biLM)", paper["pos"], PAPER_PROBE_LAYERS,
                            str(PAPER_PROBES["pos"]["reference"])))
    for name, data in sorted(results.items()):
        if name.startswith("probe:pos:"):
            lines.append(_probe_row(pos, data.get("weights", "?"),
                                    _layer_figures(data["layers"],
                                                   lambda r: r["test"]["accuracy"]),
                                    len(data["layers"]),
                                    f"{data.get('data', '')} {data.get('tagset', '')} test"))
    lines += ["", "Layer 0: a biLM's char-CNN layer or a transformer's embedding layer (its "
              "transformer layers are 1..N-1); \"layers 3+\": the further layers of a deeper "
              "representation; \"best layer\": the row's highest figure and that layer, of "
              "its N layers."]
    return lines


def expected(task: str) -> dict[str, Any]:
    """The task's ``reproduction/<task>/expected.json`` (the paper's figures), or {}."""
    path = PROJECT_ROOT / "reproduction" / task / "expected.json"
    return read_json(path) if path.is_file() else {}


def task_order() -> list[str]:
    """Every task (``elmo_experiments/tasks/``'s folders) in the order of the rows: the paper's
    in its Table 1 order (``paper.table1.row`` of ``expected.json``), then the others by name."""
    from elmo_experiments.tasks import task_names

    def key(task: str) -> tuple[bool, int, str]:
        row = expected(task).get("paper", {}).get("table1", {}).get("row")
        return (row is None, row or 0, task)

    return sorted(task_names(), key=key)


def in_table(task: str, results: dict[str, dict[str, Any]], kind: str) -> bool:
    """Whether ``task`` has a row in a table of the paper's results fed by its ``kind`` sweep
    (``main``: Table 1 and the evidence; ``layers``, ``placement``): always for the paper's
    tasks (``paper.table1`` in ``expected.json``), for another task once that sweep's
    results are committed (``results/<task>_<kind>.json``), so a new task folder adds no
    empty row and needs no table edit."""
    return "table1" in expected(task).get("paper", {}) or f"{task}_{kind}" in results


def with_seeds(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with each of its own groups' runs by seed (``by_seed``: seed -> metrics),
    for the intervals paired by seed."""
    runs = previous_runs(summary)
    groups = []
    for group in summary["groups"]:
        if "same_as" not in group:
            group = {**group, "by_seed": {
                seed: runs[name]["metrics"] for seed in group["seeds"]
                if (name := cell_name(group["variant"], group["fraction"], seed)) in runs}}
        groups.append(group)
    return {**summary, "groups": groups}


def resolve_shared(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every summary with its ``same_as`` groups replaced by the groups they name in the other
    sweep (marked ``shown_from``); one whose sweep is not committed is left out."""
    resolved = {}
    for name, summary in results.items():
        if "groups" not in summary:
            resolved[name] = summary
            continue
        groups = []
        for group in summary["groups"]:
            if "same_as" not in group:
                groups.append(group)
                continue
            sweep, _, variant = group["same_as"].rpartition("/")
            twin = _group(results.get(sweep), variant, group["fraction"])
            if twin is not None:
                groups.append({**twin, "variant": group["variant"],
                               "shown_from": group["same_as"]})
        resolved[name] = {**summary, "groups": groups}
    return resolved


def _group(summary: dict[str, Any] | None, variant: str, fraction: float = 1.0
           ) -> dict[str, Any] | None:
    for group in (summary or {}).get("groups", []):
        if group["variant"] == variant and abs(group["fraction"] - fraction) < 1e-12:
            return group
    return None


NOT_CONVERGED = "‡"  # a cell's mark: some seed's best epoch is within patience of its cap
CONVERGENCE_NOTE = (f"{NOT_CONVERGED} not converged: in the seeds named, the best epoch lies "
                    "within `patience` epochs of the `num_epochs` cap, so the run may still have "
                    "been improving when the cap stopped it (cells run before 2026-12-07 did not "
                    "record their epochs and carry no mark)")


def _ours(group: dict[str, Any] | None, key: str) -> str:
    figure = (group or {}).get("metrics", {}).get(key)
    if not figure:
        return "—"
    seeds = (group or {}).get("not_converged") or []
    mark = f" {NOT_CONVERGED} (seed {', '.join(map(str, seeds))})" if seeds else ""
    return mean_std(figure) + mark


def _paper(value: Any, std: Any = None) -> str:
    if value is None:
        return "—"
    return f"{value} ± {std}" if std is not None else f"{value}"


def _provenance(shown: list[dict[str, Any] | None]) -> str:
    """Two cells: the biLMs' and the word2vec files' SHA-1 prefixes behind the groups a row
    shows (None: not run; runs started from other vectors differ in more than the variant: the
    row then lists both)."""
    groups = [g for g in shown if g]
    sample = any(g.get("embedded_sample") for g in groups)
    bilms, vectors = (", ".join(sorted({d[:8] for g in groups for d in g.get(key, [])})) or "—"
                      for key in ("bilm_sha1", "vectors_sha1"))
    return bilms + (" (embedded sample data)" if sample else "") + f" | {vectors}"


def _values(group: dict[str, Any] | None, key: str) -> list[float] | None:
    """The seeds' figures of ``key`` in a group (None when not run)."""
    figure = (group or {}).get("metrics", {}).get(key)
    return list(figure.get("values") or []) or None if figure else None


def _seeded(group: dict[str, Any] | None, key: str) -> dict[int, float] | None:
    """Seed -> the run's figure of ``key`` in a group (None when not run)."""
    found = {seed: float(metrics[key]) for seed, metrics in (group or {}).get("by_seed", {})
             .items() if isinstance(metrics.get(key), int | float)}
    return found or None


def _main_rows(results: dict[str, dict[str, Any]]
               ) -> Iterator[tuple[str, dict[str, Any], dict[str, Any] | None, str]]:
    """Each task with a Table 1 row, in order: its title, its expected.json, its main sweep's
    summary (None when not run) and its test metric's key."""
    for task in [t for t in task_order() if in_table(t, results, "main")]:
        info = expected(task)
        yield (info.get("title", task), info, results.get(f"{task}_main"),
               info.get("metric_key", ""))


def table1(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| task | metric (test) | paper: baseline | paper: + ELMo | ours: baseline | "
             "ours: + ELMo | ours: + ELMo, biLM fine-tuned | ours: + MiniLM | "
             "ELMo − baseline [95% CI] | fine-tuned − baseline [95% CI] | biLM (SHA-1) | "
             "word vectors (SHA-1) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for title, info, summary, key in _main_rows(results):
        paper = info.get("paper", {}).get("table1", {})
        baseline, elmo, tuned, transformer = (_group(summary, v) for v in MAIN_VARIANTS)
        lines.append(f"| {title} | {info.get('metric', key)} | "
                     f"{_paper(paper.get('baseline'))} | "
                     f"{_paper(paper.get('elmo'), paper.get('elmo_std'))} | "
                     f"{_ours(baseline, key)} | {_ours(elmo, key)} | {_ours(tuned, key)} | "
                     f"{_ours(transformer, key)} | "
                     f"{render_difference(_values(elmo, key), _values(baseline, key))} | "
                     f"{render_difference(_values(tuned, key), _values(baseline, key))} | "
                     f"{_provenance([baseline, elmo, tuned, transformer])} |")
    return lines


def ablation(results: dict[str, dict[str, Any]], table: str) -> list[str]:
    kind, variants, titles = COLUMNS[table]
    lines = [f"| task (dev) | {' | '.join(titles)} | biLM (SHA-1) | word vectors (SHA-1) |",
             "|---|" + "---|" * (len(titles) + 2)]
    for task in [t for t in task_order() if in_table(t, results, kind)]:
        info = expected(task)
        paper = info.get("paper", {}).get(table, {})
        summary = results.get(f"{task}_{kind}")
        key = info.get("dev_metric_key", "")
        groups = [_group(summary, v) for v in variants]
        marks = versus_best({v: _values(g, key) or [] for v, g in zip(variants, groups,
                                                                      strict=True)})
        ours = [_ours(g, key) + (" *" if g and g.get("shown_from") else "")
                + (f" {marks[v]}" if v in marks else "")
                for g, v in zip(groups, variants, strict=True)]
        cells = [f"{o} (paper {_paper(paper.get(v))})" if paper else o
                 for o, v in zip(ours, variants, strict=True)]
        lines.append(f"| {info.get('title', task)} | {' | '.join(cells)} | "
                     f"{_provenance(groups)} |")
    return lines


def _perplexities(figures: dict[str, Any]) -> str:
    return (f"{figures['perplexity_forward']:.1f} / {figures['perplexity_backward']:.1f} / "
            f"**{figures['perplexity']:.1f}**")


def _perplexity_rows(data: dict[str, Any], run_column: str) -> list[str]:
    """Each task's dev text under the biLM before and after its further training."""
    lines = ["| task | dev text: tokens | before: forward / backward / **average** | "
             f"after | paper (average, before → after) | {run_column} | biLM after (SHA-1) |",
             "|---|---|---|---|---|---|---|"]
    for task in task_order():
        row = data["tasks"].get(task)
        if row is None:
            continue
        info = expected(task)
        paper = info.get("paper", {}).get("finetune_perplexity")
        tuning = row["finetuning"]
        paper_cell = f"{paper['before']} → {paper['after']}" if paper else "—"
        lines.append(f"| {info.get('title', task)} | {row['tokens']:,} | "
                     f"{_perplexities(row['before'])} | {_perplexities(row['after'])} | "
                     f"{paper_cell} | {tuning['training_tokens']:,}, "
                     f"{tuning['wall_seconds'] / 60:.1f} min | {row['biLM_after_sha1'][:8]} |")
    return lines


def finetuning_table(results: dict[str, dict[str, Any]]) -> list[str]:
    """The supplement's table (A.1): each task's dev text under the biLM before and after one
    pass over the task's training text (``reproduction/bilm/finetuning.py``)."""
    data = results.get("bilm_finetuning")
    if not data:
        return ["No fine-tuned biLM is measured yet (`results/bilm_finetuning.json`, from "
                f"`{FINETUNING_SCRIPT}`)."]
    before = sorted({row["biLM_before_sha1"][:8] for row in data["tasks"].values()})
    return [*_perplexity_rows(data, "fine-tuning: training tokens, wall time"),
            "", f"Before: `{data.get('before')}` ({', '.join(before)}); "
            "each after: that biLM after one pass over the task's training text "
            "(`experiments/bilm/finetune_<task>.jsonnet`), exact softmax over its vocabulary; "
            f"regenerate with `{FINETUNING_SCRIPT}` (every task)."]


def continued_tables(results: dict[str, dict[str, Any]]) -> list[str]:
    """For each continued biLM measured (``results/<name>.json`` of kind ``bilm_continued``),
    the perplexity of the tasks' dev texts before and after."""
    lines: list[str] = []
    for key in sorted(k for k in results if k.startswith("bilm_continued:")):
        data = results[key]
        config = next(iter(data["tasks"].values()))["finetuning"]["config"]
        lines += ["", f"`{data.get('before')}` continued by `{config}`: perplexity of the dev "
                  f"texts (`{data.get('command')}`).", "",
                  *_perplexity_rows(data, "run: its corpus's training tokens, wall time")]
    return lines


def _verdict(difference: str) -> str:
    if difference == "—":
        return "not run"
    if difference == TOO_FEW:
        return "fewer than 2 seeds"
    if difference.endswith("†"):
        return "a gain beyond seed noise" if not difference.startswith("−") else \
            "a loss beyond seed noise"
    return "within seed noise"


def evidence(results: dict[str, dict[str, Any]]) -> list[str]:
    """One row per task: does ELMo's gain on test stand out of seed noise, as the paper's
    does, with the shipped biLM and with it fine-tuned on the task's text?"""
    lines = ["| task | paper: ELMo − baseline | ours: ELMo − baseline [95% CI] | verdict | "
             "ours: fine-tuned − baseline [95% CI] | verdict | ELMo − baseline over the test "
             "set (paired bootstrap, per kept seed) |", "|---|---|---|---|---|---|---|"]
    bootstraps = _bootstraps(results)  # read once for every row
    for title, info, summary, key in _main_rows(results):
        paper = info.get("paper", {}).get("table1", {})
        baseline = _values(_group(summary, "baseline"), key)
        shipped = render_difference(_values(_group(summary, "elmo"), key), baseline)
        tuned = render_difference(_values(_group(summary, FINETUNED), key), baseline)
        gain = (f"{paper['elmo'] - paper['baseline']:+.1f}"
                if "elmo" in paper and "baseline" in paper else "—")
        lines.append(f"| {title} | {gain} | {shipped} | {_verdict(shipped)} | "
                     f"{tuned} | {_verdict(tuned)} | "
                     f"{_bootstrapped(bootstraps, (summary or {}).get('sweep'))} |")
    return lines


def _bootstraps(results: dict[str, dict[str, Any]]
                ) -> list[tuple[str, str, str, str, dict[str, Any]]]:
    """(sweep, variant A, variant B, seeds, result) of every committed paired bootstrap, in
    that order."""
    found = []
    for name in (k for k in results if k.startswith("bootstrap:")):
        data = results[name]
        (sweep, a), (_, b) = _cell_of(data["a"]["run"]), _cell_of(data["b"]["run"])
        seeds = "/".join(map(str, sorted({data["a"]["seed"], data["b"]["seed"]})))
        found.append((sweep, a, b, seeds, data))
    return sorted(found, key=lambda row: row[:4])


def _interval(boot: dict[str, Any]) -> str:
    """``+1.53 [+0.35, +2.91] †`` (the mark where the interval excludes 0)."""
    return (f"{boot['difference']:+.2f} [{boot['low']:+.2f}, {boot['high']:+.2f}]"
            f"{' †' if boot['beyond_noise'] else ''}").replace("-", "−")


def _bootstrapped(bootstraps: list[tuple[str, str, str, str, dict[str, Any]]],
                  sweep: str | None) -> str:
    """``seed 2: +1.53 [+0.35, +2.91] †; seed 3: ...`` for the sweep's ELMo − baseline pairs
    among ``bootstraps`` (``_bootstraps``'s)."""
    return "; ".join(f"seed {seeds}: {_interval(data['bootstrap'])}"
                     for found, a, b, seeds, data in bootstraps
                     if found == sweep and (a, b) == ("baseline", "elmo")) or "—"


def levers(results: dict[str, dict[str, Any]]) -> list[str]:
    """One row per further lever run (a main sweep's variant beyond Table 1's, e.g.
    ``elmo_wide``): its test figure and its gain over the task's baseline against seed noise."""
    rows = []
    for title, _info, summary, key in _main_rows(results):
        baseline = _values(_group(summary, "baseline"), key)
        for group in (summary or {}).get("groups", []):
            if group["variant"] in MAIN_VARIANTS or not _values(group, key):
                continue
            gain = render_difference(_values(group, key), baseline)
            rows.append(f"| {title} | {group['variant']} | "
                        f"{_ours(group, key)} | {gain} | {_verdict(gain)} | "
                        f"{_provenance([group])} |")
    if not rows:
        return ["No further lever is measured yet."]
    return ["| task | variant | ours (test) | variant − baseline [95% CI] | verdict | "
            "biLM (SHA-1) | word vectors (SHA-1) |", "|---|---|---|---|---|---|---|", *rows]


def _per_seed(a: dict[int, float] | None, b: dict[int, float] | None) -> str:
    """``1: +0.69, 2: +0.94``: ``a - b`` on each seed both ran."""
    if not a or not b:
        return "—"
    return ", ".join(f"{s}: {a[s] - b[s]:+.2f}".replace("-", "−")
                     for s in sorted(a.keys() & b.keys())) or "—"


def paired_by_seed(results: dict[str, dict[str, Any]]) -> list[str]:
    """Every comparison with the baseline that Table 1, the evidence and the levers make, seed
    by seed: the per-seed differences, Welch's interval and the seed-paired one."""
    rows = []
    for title, _info, summary, key in _main_rows(results):
        baseline = _group(summary, "baseline")
        base_values, base_seeded = _values(baseline, key), _seeded(baseline, key)
        if not base_values:
            continue
        for group in (summary or {}).get("groups", []):
            values = _values(group, key)
            if group["variant"] in ("baseline", "transformer") or not values:
                continue
            seeded = _seeded(group, key)
            rows.append(f"| {title} | {group['variant']} − baseline | "
                        f"{_per_seed(seeded, base_seeded)} | "
                        f"{render_difference(values, base_values)} | "
                        f"{render_paired(seeded, base_seeded)} |")
    if not rows:
        return ["No comparison with a baseline is measured yet."]
    return ["| task | comparison | per seed (seed: difference) | Welch [95% CI] | "
            "paired by seed [95% CI] |", "|---|---|---|---|---|", *rows]


def _cell_of(run: str) -> tuple[str, str]:
    """A sweep cell's (sweep, variant) from its run directory (``<sweep>/<variant>-frac..``)."""
    path = Path(run)
    return path.parent.name, path.name.split("-frac")[0]


def _p_value(p: float, samples: int) -> str:
    """``0.0123``; ``< 0.0001`` where no draw was that far (the least p that many can show)."""
    return f"< {1 / samples:.4g}" if p == 0 else f"{p:.4f}"


def bootstrap_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    """Every committed paired bootstrap (``elmo-exp compare ... --output``), by sweep and seed:
    both runs' figures on the whole test set and B − A with its 95% interval and p-value."""
    rows = [f"| {sweep} | {b} − {a} | {seeds} | `{data['metric']}` | "
            f"{data['bootstrap']['units']} {data['unit']}s | {data['bootstrap']['a']:.2f} | "
            f"{data['bootstrap']['b']:.2f} | {_interval(data['bootstrap'])} | "
            f"{_p_value(data['bootstrap']['p_value'], data['bootstrap']['samples'])} |"
            for sweep, a, b, seeds, data in _bootstraps(results)]
    if not rows:
        return ["None committed yet."]
    return ["| sweep | comparison | seed | metric | resampled | A | B | B − A [95% CI] | p |",
            "|---|---|---|---|---|---|---|---|---|", *rows]


def render_tables(folder: str | Path) -> str:
    """Tables 1, 2 and 3 as markdown, ours as mean ± std (n seeds); "—" where not run."""
    results = load_results(folder)
    parts = ["**Table 1** (test sets; SQuAD: dev): the paper's figures, then ours. Our "
             "baselines start from word2vec vectors trained on the biLM's own corpus, not "
             "GloVe or Senna; \"+ MiniLM\" puts a frozen 6-layer transformer (MiniLM-L6) "
             "where ELMo goes, with the same mixes.", "", *table1(results),
             "", "**Table 2** (development sets): how the biLM layers are combined.", "",
             *ablation(results, "table2"), "",
             "**Table 3** (development sets): where ELMo goes.", "", *ablation(results, "table3"),
             "", "\\* the same runs as Table 1's (the same config and seeds; dev metric). "
             "Against the row's best column (the highest mean over at least 2 seeds; \"best of n "
             "≥ 2\" where a column with fewer seeds has a higher mean): ≈ within "
             "seed noise of it, ▼ below it beyond seed noise (Welch's 95% interval of the "
             "difference excludes 0); \"n too small\": fewer than 2 seeds. In Table 1, † marks "
             "a difference whose 95% interval (Welch's t over seeds) excludes 0. \"word vectors\": "
             "the word2vec files the row's runs started from; two mean that some variants "
             "started from other vectors than the rest (the task README lists them per "
             "variant; docs/framework.md, \"Static word vectors\", says why). "
             f"{CONVERGENCE_NOTE}.",
             "", "**What the evidence says** (test sets; SQuAD: dev): ELMo's gain over the "
             "baseline with the shipped biLM, and with the biLM fine-tuned on the task's "
             "training text, against seed noise; the last column makes the same comparison "
             "over the test set for each seed whose two models were kept (the paired "
             "bootstrap, below).", "", *evidence(results),
             "", "**Further levers** (test sets), tried where fine-tuning left ELMo's gain "
             "within seed noise; each variant is described in "
             "`experiments/lib/ablations.libsonnet`.", "", *levers(results),
             "", "**Paired by seed** (test sets; SQuAD: dev): a seed gives every variant of a "
             "sweep the same batches in the same order, so part of the seeds' spread is shared "
             "and cancels in the per-seed differences. The paired t interval (n − 1 degrees of "
             "freedom over the seeds both variants ran) is given for every comparison above, "
             "beside Welch's, which ignores the pairing and stays the verdict of the tables "
             "above; † marks an interval that excludes 0.", "", *paired_by_seed(results),
             "", "**Paired bootstrap over the test set** (`elmo-exp compare RUN_A RUN_B "
             "--samples 10000 --output results/bootstrap/<name>.json`): one trained model of "
             "each variant, the same seed, both scored on 10,000 draws of the test set's units "
             "with replacement. It asks whether another test set of the same kind would agree, "
             "not whether another seed would (the intervals above); † marks an interval that "
             "excludes 0; p: the share of draws at least as far from the observed difference "
             "as it is from 0. Over few units (coreference's test set is 10 documents) the "
             "interval is rough: a bootstrap of few units tends to understate the spread. Only "
             "pairs whose run directories were kept are here.", "",
             *bootstrap_rows(results),
             *continued_tables(results),
             "", "**Domain fine-tuning** (the paper's supplement A.1): perplexity of each "
             "task's dev text.", "", *finetuning_table(results),
             "", "**Tables 5 and 6**: what each layer of a frozen biLM (or transformer) "
             "captures (linear POS probe, nearest-sense WSD).", "", *probes(results)]
    return "\n".join(parts) + "\n"


SWEEP_KINDS = ("main", "layers", "placement", "fractions")  # a task's sweeps, in this order


def task_table(results: dict[str, dict[str, Any]], task: str) -> str:
    """A task README's block: every group of every committed sweep of ``task``, dev and test
    metric as mean ± std (n seeds), with the biLM; a line saying so where none is committed."""
    info = expected(task)
    dev, test = info.get("dev_metric_key", ""), info.get("metric_key", "")
    keys = [dev] if dev == test else [dev, test]  # no test set (SQuAD's is hidden): one column
    rows = []
    for kind in SWEEP_KINDS:
        for group in (results.get(f"{task}_{kind}") or {}).get("groups", []):
            figures = " | ".join(_ours(group, key) for key in keys)
            variant = group["variant"] + (f" (= {group['shown_from']})"
                                          if group.get("shown_from") else "")
            rows.append(f"| {task}_{kind} | {variant} | {group['fraction']:g} | "
                        f"{figures} | {_provenance([group])} |")
    if not rows:
        return (f"No measured runs of this task are committed yet (`results/{task}_*.json`, "
                f"from `elmo-exp sweep experiments/ablations/{task}_<table>.jsonnet`).\n")
    said = (f"Dev: `{dev}` (the selected epoch; there is no test set)." if len(keys) == 1 else
            f"Dev: `{dev}` (the selected epoch); test: `{test}`.")
    return "\n".join([
        f"Generated by `make tables` from `results/{task}_*.json` (each from `elmo-exp sweep "
        f"experiments/ablations/<sweep>.jsonnet`); mean ± std (n seeds). {said}", "",
        f"| sweep | variant | share of train | {' | '.join(['dev', 'test'][:len(keys)])} | "
        "biLM (SHA-1) | word vectors (SHA-1) |", "|---|---|---|" + "---|" * len(keys) + "---|---|",
        *rows]) + "\n"


def task_readmes() -> dict[str, Path]:
    """Task -> its README, for every task whose README has a tables block."""
    found = {}
    for task in task_order():
        path = PROJECT_ROOT / "reproduction" / task / "README.md"
        if path.is_file() and BEGIN in path.read_text(encoding="utf-8"):
            found[task] = path
    return found


def write_figures(folder: str | Path, output_dir: str | Path) -> list[Path]:
    """Figure 1 (dev metric against the share of training data, baseline vs ELMo) and Figure 2
    (learned layer weights per task and placement), PNG and PDF each."""
    from elmo_experiments.analysis.plots import _pyplot

    results = load_results(folder)
    plt = _pyplot()
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    tasks = [t for t in task_order() if f"{t}_fractions" in results]
    figure, axes = plt.subplots(1, max(1, len(tasks)), figsize=(4.5 * max(1, len(tasks)), 3.5),
                                squeeze=False)
    for axis, task in zip(axes[0], tasks, strict=False):
        key = expected(task).get("dev_metric_key", "")
        for variant in ("baseline", "elmo"):
            groups = sorted((g for g in results[f"{task}_fractions"]["groups"]
                             if g["variant"] == variant and key in g["metrics"]),
                            key=lambda g: g["fraction"])
            axis.errorbar([100 * g["fraction"] for g in groups],
                          [g["metrics"][key]["mean"] for g in groups],
                          yerr=[g["metrics"][key]["std"] for g in groups], marker="o",
                          capsize=3, label=variant)
        axis.set_xscale("log")
        metric = expected(task).get("metric", key).split(",")[0]  # "span F1 (conlleval)"
        axis.set(title=expected(task).get("title", task), xlabel="% of training data",
                 ylabel=f"dev {metric}")
        axis.legend()
    written += _save(figure, output_dir / "figure1", plt)
    bars = [(task, placement, mix) for task in task_order()
            for group in [_group(results.get(f"{task}_main"), "elmo")] if group
            for mixes in group.get("elmo_mixes", {}).values()
            for placement, mix in zip(("input", "output"), mixes, strict=False)]
    figure, axis = plt.subplots(figsize=(max(4.0, 1.4 * len(bars) + 1), 3.5))
    width = 0.8 / 3
    for layer in range(3):
        axis.bar([i + (layer - 1) * width for i in range(len(bars))],
                 [mix["weights"][layer] if layer < len(mix["weights"]) else 0.0
                  for _, _, mix in bars], width, label=f"layer {layer}")
    axis.set_xticks(range(len(bars)),
                    [f"{expected(t).get('title', t)}\n{p}" for t, p, _ in bars])
    axis.set(ylabel="softmax-normalised weight", title="Learned ELMo layer weights")
    axis.set_ylim(0, 1)  # room for the legend above bars that are often near 1/3
    axis.legend(loc="upper right", ncols=3, fontsize="small")
    written += _save(figure, output_dir / "figure2", plt)
    return written


def _save(figure: Any, stem: Path, plt: Any) -> list[Path]:
    figure.tight_layout()
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:  # no creation date or software stamp: the same results, the same bytes
        metadata = {"CreationDate": None} if path.suffix == ".pdf" else {"Software": None}
        atomic_write(path, lambda tmp, path=path, metadata=metadata: figure.savefig(
            tmp, format=path.suffix[1:], metadata=metadata))
    plt.close(figure)
    return paths


BEGIN, END = "<!-- tables:begin -->\n", "<!-- tables:end -->"


def replace_block(path: str | Path, text: str) -> None:
    """Put ``text`` between the ``tables:begin``/``tables:end`` markers of a markdown file."""
    content = Path(path).read_text(encoding="utf-8")
    if content.count(BEGIN) != 1 or content.count(END) != 1 or (
            content.index(BEGIN) > content.index(END)):
        raise DataError(f"{path}: needs one {BEGIN.strip()} line followed by one {END}")
    head, rest = content.split(BEGIN)
    tail = rest.split(END)[1]
    atomic_write(str(path), lambda tmp: Path(tmp).write_text(
        head + BEGIN + text + END + tail, encoding="utf-8"))
