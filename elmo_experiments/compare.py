"""Two trained runs on one test set: their predictions, scored unit by unit, and the paired
bootstrap of B's score minus A's (``elmo-exp compare``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from elmo_experiments.analysis.bootstrap import paired_bootstrap
from elmo_experiments.data.fields import target_fields
from elmo_experiments.errors import ConfigError
from elmo_experiments.metrics.accuracy import LabelAccuracy
from elmo_experiments.metrics.metric import State, UnitMetric, total
from elmo_experiments.predict import evaluation_pass
from elmo_experiments.run import Assembled, load_run
from elmo_experiments.sweeps.summary import portable
from elmo_experiments.version import code_version

logger = logging.getLogger("elmo_experiments")
RECORDED_TOLERANCE = 1e-6  # a re-evaluation this close to the run's recorded test figure agrees


def unit_metric(run: Assembled, source: str) -> UnitMetric:
    """The run's dataset metric; a classifier's label accuracy where it has none."""
    metric = run.dataset_metric
    if metric is not None:
        if not hasattr(metric, "units") or not hasattr(metric, "from_state"):
            raise ConfigError([f"dataset_metric: {type(metric).__name__} gives no units() and "
                               f"from_state(), which the bootstrap draws"], source=source)
        return metric  # type: ignore[return-value]
    if run.experiment["trainer"]["validation_metric"].lstrip("+-") == "accuracy":
        return LabelAccuracy()
    raise ConfigError(["dataset_metric: not set, and the model is not a classifier scored by "
                       "accuracy: nothing scores its predictions unit by unit"], source=source)


def _identity(run_dir: Path, run: Assembled, recorded: str | None) -> dict[str, Any]:
    """Which run this is: its path and seed; its code and biLM digests from run.json, and the
    figure training recorded in metrics.json under ``recorded`` (``test_f1``), where there."""
    identity: dict[str, Any] = {"run": str(run_dir), "seed": run.experiment["random_seed"]}
    if (run_dir / "run.json").is_file():
        record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        identity["code"] = (record.get("sessions") or [{}])[-1].get("code")
        identity["bilm_sha1"] = [bilm.get("sha1") for bilm in record.get("bilm", [])]
    if recorded and (run_dir / "metrics.json").is_file():
        figures = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
        if isinstance(figures.get(recorded), int | float):
            identity["recorded"] = {recorded: figures[recorded]}
    return identity


def _default_data(run: Assembled) -> tuple[str | None, str]:
    """A run's test data and the key its recorded figure has in metrics.json; its validation
    data where it has no test set (SQuAD's is hidden), scored by the selected epoch."""
    if run.experiment["test_data_path"]:
        return run.experiment["test_data_path"], "test_{}"
    return run.experiment["validation_data_path"], "best_validation_{}"


def _same_gold(first: list[dict[str, Any]], second: list[dict[str, Any]],
               fields: list[str], source: str) -> None:
    """Both runs read the same instances with the same gold (else units would pair wrongly)."""
    if len(first) != len(second):
        raise ConfigError([f"the two runs read {len(first)} and {len(second)} instances from "
                           f"the data file"], source=source)
    for number, (a, b) in enumerate(zip(first, second, strict=True)):
        for field in fields:
            if a.get(field) != b.get(field):
                raise ConfigError([f"instance {number}: the two runs read different gold "
                                   f"{field!r} (readers that differ?)"], source=source)


def compare_runs(run_a: str | Path, run_b: str | Path, data_file: str | Path | None = None,
                 metric: str | None = None, samples: int = 10_000, seed: int = 0,
                 weights: str = "best.pt", device: str = "cpu") -> dict[str, Any]:
    """The paired bootstrap of run B against run A on ``data_file`` (default: their test data,
    which must be one file): both runs' figures and identities, and ``bootstrap``."""
    first, second = load_run(run_a, weights, device), load_run(run_b, weights, device)
    (default, recorded), (other, _) = _default_data(first), _default_data(second)
    path = data_file or default
    if not path:
        raise ConfigError(["test_data_path and validation_data_path: not set; give DATA_FILE"],
                          source=str(run_a))
    if data_file is None and other != path:
        raise ConfigError([f"{other!r} is its test (or validation) data, but run A's is "
                           f"{path!r}; give DATA_FILE to compare them on one"],
                          source=str(run_b))
    scorer = unit_metric(first, str(run_a))
    if type(unit_metric(second, str(run_b))) is not type(scorer):
        raise ConfigError([f"dataset_metric: not run A's {type(scorer).__name__}"],
                          source=str(run_b))
    name = metric or scorer.primary
    if name not in scorer.names:
        raise ConfigError([f"--metric {name}: {type(scorer).__name__} reports "
                           f"{', '.join(scorer.names)}"], source=str(run_a))
    passes = []
    for run, run_dir in ((first, run_a), (second, run_b)):
        instances, predictions, metrics = evaluation_pass(run, path)
        units = scorer.units(instances, predictions)
        figure = scorer.from_state(total(units))[name]
        if isinstance(scorer, LabelAccuracy) and abs(figure - metrics["accuracy"]) > 1e-9:
            raise RuntimeError(f"{run_dir}: accuracy from the predicted labels is {figure!r}, "
                               f"but the model's own count gave {metrics['accuracy']!r}")
        key = recorded.format(name) if data_file is None else None
        passes.append((instances, units, _identity(Path(run_dir), run, key)))
    _same_gold(passes[0][0], passes[1][0], target_fields(first.reader.fields), str(run_b))

    def score(state: State) -> float:
        return scorer.from_state(state)[name]

    result = paired_bootstrap(passes[0][1], passes[1][1], score, name, samples, seed)
    report: dict[str, Any] = {"code": code_version(), "data_file": portable(str(path)),
                              "metric": name, "unit": scorer.unit, "bootstrap": result.as_dict()}
    for side, (_, _, identity), figure in (("a", passes[0], result.a), ("b", passes[1], result.b)):
        for key, value in identity.get("recorded", {}).items():
            if abs(value - figure) > RECORDED_TOLERANCE:
                logger.warning("%s: %s %.6f now, but training recorded %s %.6f",
                               identity["run"], name, figure, key, value)
        report[side] = {**identity, name: figure}
    return report
