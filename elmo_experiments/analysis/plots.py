"""``elmo-exp plot``: training curves and learned ELMo layer weights of one or more runs.

Only the run directory's record files are read (``metrics_epoch_N.json``, ``metrics.json``,
and ``config.json`` for the validation metric and the ELMo placements), never a checkpoint,
so a run can be plotted while it trains. Drawn with matplotlib's Agg backend (no display).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import atomic_write, read_json
from elmo_experiments.errors import ConfigError, DataError, ElmoError
from elmo_experiments.modules.embedders.mixes import MixWeights, config_at_input, mix_weights

WHAT = ("curves", "layers", "both")
FORMATS = (".png", ".pdf", ".svg")
EPOCH_FILE = re.compile(r"metrics_epoch_(\d+)\.json")


@dataclass
class RunRecord:
    """What a run directory says about its epochs."""

    path: Path
    epochs: list[dict[str, Any]]
    summary: dict[str, Any] | None = None  # metrics.json, once the run has finished
    config: dict[str, Any] = field(default_factory=dict)
    name: str = ""  # the legend label

    @property
    def metric(self) -> str:
        """The validation metric's name (``trainer.validation_metric`` without its sign)."""
        watched = (self.config.get("trainer") or {}).get("validation_metric") or "-loss"
        return str(watched)[1:]

    @property
    def best_epoch(self) -> int | None:
        return (self.summary or {}).get("best_epoch")

    def series(self, key: str) -> tuple[list[int], list[float]]:
        """Epoch numbers and values of ``key`` where the epoch records have it."""
        points = [(r["epoch"], r[key]) for r in self.epochs
                  if isinstance(r.get(key), (int, float))]
        return [p[0] for p in points], [float(p[1]) for p in points]

    def mixes(self) -> tuple[list[MixWeights], int | None]:
        """The learned mixes of the best epoch (or of the latest one while the run trains),
        and that epoch's number."""
        best = self.best_epoch
        record = next((r for r in self.epochs if r["epoch"] == best), None) if best else None
        record = record or self.epochs[-1]
        return (mix_weights(record.get("elmo_mixes") or {}, config_at_input(self.config)),
                record.get("epoch"))


def read_run(path: str | Path) -> RunRecord:
    """A run directory's epoch records; a one-line ``DataError`` when it has none."""
    path = Path(path)
    if not path.is_dir():
        raise DataError(f"{path}: not a directory")
    files = sorted(((int(m.group(1)), p) for p in path.iterdir()
                    if (m := EPOCH_FILE.fullmatch(p.name))), key=lambda item: item[0])
    if not files:
        raise DataError(f"{path}: no metrics_epoch_N.json (not a run directory, or no epoch "
                        f"has finished yet): nothing to plot")
    epochs = [{"epoch": number, **read_json(file)} for number, file in files]
    summary = read_json(path / "metrics.json") if (path / "metrics.json").is_file() else None
    config = read_json(path / "config.json") if (path / "config.json").is_file() else {}
    return RunRecord(path, epochs, summary, config)


def _names(paths: list[Path]) -> list[str]:
    """Legend labels: the directory names, with more of the path where two would clash."""
    for depth in range(1, 1 + max(len(p.resolve().parts) for p in paths)):
        names = ["/".join(p.resolve().parts[-depth:]) for p in paths]
        if len(set(names)) == len(names):
            return names
    return [str(p) for p in paths]


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ElmoError("elmo-exp plot needs matplotlib: pip install -e '.[viz]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _draw_curves(axes: Any, runs: list[RunRecord], colors: list[Any]) -> None:
    from matplotlib.ticker import MaxNLocator

    loss_axis, metric_axis = axes
    for run, color in zip(runs, colors, strict=True):
        for key, style, what in (("training_loss", "-", "training"),
                                 ("validation_loss", "--", "validation")):
            x, y = run.series(key)
            if x:
                loss_axis.plot(x, y, style, marker="o", markersize=3, color=color,
                               label=f"{run.name} ({what})")
        split = "validation" if run.series(f"validation_{run.metric}")[0] else "training"
        x, y = run.series(f"{split}_{run.metric}")
        if x:
            metric_axis.plot(x, y, "-", marker="o", markersize=3, color=color,
                             label=f"{run.name} ({split} {run.metric})")
            if run.best_epoch in x:
                metric_axis.plot([run.best_epoch], [y[x.index(run.best_epoch)]], "*",
                                 markersize=12, color=color)
    metrics = sorted({run.metric for run in runs})
    loss_axis.set(title="loss", xlabel="epoch", ylabel="loss")
    metric_axis.set(title=f"validation metric ({', '.join(metrics)}; * best epoch)",
                    xlabel="epoch", ylabel=" / ".join(metrics))
    for axis in axes:
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")


def _draw_layers(figure: Any, runs: list[RunRecord]) -> None:
    """One panel per placement; in each, a group of bars (one per layer) for every run."""
    found = [(run, *run.mixes()) for run in runs]
    labels = list(dict.fromkeys(mix.label for _, mixes, _ in found for mix in mixes))
    modules = {mix.module for _, mixes, _ in found for mix in mixes}
    short = {m: m.rsplit(".", 1)[-1] for m in modules}  # the config key, unless two clash
    if len(set(short.values())) < len(short):
        short = {m: m for m in modules}
    axes = figure.subplots(1, len(labels), squeeze=False)[0]
    for axis, label in zip(axes, labels, strict=True):
        groups = [(run, epoch, mix) for run, mixes, epoch in found
                  for mix in mixes if mix.label == label]
        layers = max(len(mix.weights) for _, _, mix in groups)
        width = 0.8 / layers
        for layer in range(layers):
            positions = [g + (layer - (layers - 1) / 2) * width for g in range(len(groups))]
            heights = [mix.weights[layer] if layer < len(mix.weights) else 0.0
                       for _, _, mix in groups]
            axis.bar(positions, heights, width, label=f"layer {layer}", color=f"C{layer}")
        axis.set_xticks(range(len(groups)),
                        [f"{run.name}\nepoch {epoch}, γ {mix.gamma:.2f}"
                         for run, epoch, mix in groups], fontsize="small")
        first = groups[0][2]
        axis.set(title=f"ELMo {short[first.module]!r} ({first.placement})\n"
                       f"softmax-normalised layer weights", ylabel="weight s_j", ylim=(0, 1))
        axis.axhline(1 / layers, color="grey", linewidth=0.8, linestyle=":")  # uniform mix
        pad = max(0.0, (2 - len(groups)) / 2)  # a lone run's bars stay narrow
        axis.set_xlim(-0.6 - pad, len(groups) - 0.4 + pad)
        axis.grid(axis="y", alpha=0.3)
        axis.legend(fontsize="small")


def plot_runs(run_dirs: list[str | Path], output: str | Path, what: str = "both") -> Path:
    """Draw ``what`` (curves, layers or both) for the runs into ``output`` (.png/.pdf/.svg).

    ``layers`` needs every run to have learned ELMo mixes; ``both`` draws the layer panels
    for the runs that have them (curves only when none has).
    """
    if what not in WHAT:
        raise ConfigError([f"--what: {what!r}; choose one of {', '.join(WHAT)}"],
                          source="elmo-exp plot")
    output = Path(output)
    if output.suffix.lower() not in FORMATS:
        raise ConfigError([f"-o {output}: write a {', '.join(FORMATS)} file"],
                          source="elmo-exp plot")
    runs = [read_run(path) for path in run_dirs]
    for run, name in zip(runs, _names([run.path for run in runs]), strict=True):
        run.name = name
    with_elmo = [run for run in runs if run.mixes()[0]]
    if what == "layers":
        for run in runs:
            if not run.mixes()[0]:
                raise DataError(f"{run.path}: no learned ELMo layer weights in its metrics "
                                f"(elmo_mixes): the run has no ELMo; plot it with --what curves")
    curves = what in ("curves", "both")
    layers = what == "layers" or (what == "both" and bool(with_elmo))
    plt = _pyplot()
    placements = len({m.label for run in with_elmo for m in run.mixes()[0]}) if layers else 0
    width = max(11.0, 4.5 * placements)
    figure = plt.figure(figsize=(width, 4.5 * (curves + layers)), layout="constrained")
    try:
        parts = figure.subfigures(2, 1) if curves and layers else [figure]
        if curves:
            colors = [f"C{i % 10}" for i in range(len(runs))]
            _draw_curves(parts[0].subplots(1, 2), runs, colors)
        if layers:
            _draw_layers(parts[-1], with_elmo)
        figure.suptitle(", ".join(run.name for run in runs))
        atomic_write(output, lambda tmp: figure.savefig(tmp, format=output.suffix[1:].lower()))
    finally:
        plt.close(figure)
    return output
