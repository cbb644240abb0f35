"""Two trained runs on one test set: their predictions, scored unit by unit, and the paired
bootstrap of B's score minus A's (``elmo-exp compare``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from elmo_experiments.analysis.bootstrap import paired_bootstrap
from elmo_experiments.data.files import DATA_DIR_VARIABLE
from elmo_experiments.errors import ConfigError
from elmo_experiments.metrics.accuracy import LabelAccuracy
from elmo_experiments.metrics.metric import Unit, UnitMetric, total
from elmo_experiments.predict import evaluation_pass
from elmo_experiments.run import Assembled, load_run
from elmo_experiments.version import code_version

# what a unit is, by the metric that scores it (for the report)
UNIT_KINDS = {"ConllCoref": "document", "SquadMetric": "article", "SrlEval": "sentence",
              "Conlleval": "sentence", "GapMetric": "example", "LabelAccuracy": "instance"}


def unit_metric(run: Assembled, source: str) -> UnitMetric:
    """The run's dataset metric; a classifier's label accuracy where it has none."""
    if run.dataset_metric is not None:
        return run.dataset_metric
    if run.experiment["trainer"]["validation_metric"].lstrip("+-") == "accuracy":
        return LabelAccuracy()
    raise ConfigError(["dataset_metric: not set, and the model is not a classifier scored by "
                       "accuracy: nothing scores its predictions unit by unit"], source=source)


def _metric_name(run: Assembled, metric: UnitMetric, asked: str | None, source: str) -> str:
    name = asked or run.experiment["trainer"]["validation_metric"].lstrip("+-")
    if name not in metric.names:
        raise ConfigError([f"--metric {name}: {type(metric).__name__} reports "
                           f"{', '.join(metric.names)}"], source=source)
    return name


def _portable(path: str) -> str:
    """``path`` as ``$ELMO_DATA_DIR/...`` where it lies under the data folder."""
    root = os.environ.get(DATA_DIR_VARIABLE)
    if root and path.startswith(root.rstrip("/") + "/"):
        return f"${DATA_DIR_VARIABLE}/{path[len(root.rstrip('/')) + 1:]}"
    return path


def _identity(run_dir: Path, run: Assembled) -> dict[str, Any]:
    """Which run this is: its path, seed, code and biLM digests (from run.json when there)."""
    identity: dict[str, Any] = {"run": str(run_dir), "seed": run.experiment["random_seed"]}
    record = run_dir / "run.json"
    if record.is_file():
        data = json.loads(record.read_text(encoding="utf-8"))
        identity["code"] = (data.get("sessions") or [{}])[-1].get("code")
        identity["bilm_sha1"] = [bilm.get("sha1") for bilm in data.get("bilm", [])]
    return identity


def scored(run_dir: str | Path, data_file: str | Path | None, weights: str, device: str
           ) -> tuple[Assembled, UnitMetric, list[Unit], dict[str, Any], str]:
    """The run, its unit metric, its units on ``data_file`` (default: its test data), its
    evaluation metrics and the data file read."""
    run = load_run(run_dir, weights, device)
    path = data_file or run.experiment["test_data_path"]
    if not path:
        raise ConfigError(["test_data_path: not set; give DATA_FILE"], source=str(run_dir))
    metric = unit_metric(run, str(run_dir))
    instances, predictions, metrics = evaluation_pass(run, path)
    return run, metric, metric.units(instances, predictions), metrics, str(path)


def compare_runs(run_a: str | Path, run_b: str | Path, data_file: str | Path | None = None,
                 metric: str | None = None, samples: int = 10_000, seed: int = 0,
                 weights: str = "best.pt", device: str = "cpu") -> dict[str, Any]:
    """The paired bootstrap of run B against run A on ``data_file`` (default: A's test data,
    which must be B's too): both runs' figures and identities, and ``bootstrap``."""
    first, first_metric, first_units, first_metrics, path = scored(run_a, data_file, weights,
                                                                    device)
    second, second_metric, second_units, second_metrics, second_path = scored(
        run_b, data_file or path, weights, device)
    if data_file is None and second.experiment["test_data_path"] != path:
        raise ConfigError([f"test_data_path: {second.experiment['test_data_path']!r}, but run "
                           f"A's is {path!r}; give DATA_FILE to compare them on one"],
                          source=str(run_b))
    if type(first_metric) is not type(second_metric):
        raise ConfigError([f"dataset_metric: {type(second_metric).__name__}, but run A's is "
                           f"{type(first_metric).__name__}"], source=str(run_b))
    name = _metric_name(first, first_metric, metric, str(run_a))
    for units, metrics, unit_scorer, run_dir in (
            (first_units, first_metrics, first_metric, run_a),
            (second_units, second_metrics, second_metric, run_b)):
        ours, evaluated = unit_scorer.from_state(total(units))[name], metrics.get(name)
        if evaluated is not None and abs(ours - evaluated) > 1e-9:
            raise RuntimeError(f"{run_dir}: {name} from its units is {ours!r}, but its "
                               f"evaluation gave {evaluated!r}")

    def score(state: dict[str, Any]) -> float:
        return first_metric.from_state(state)[name]

    result = paired_bootstrap(first_units, second_units, score, name, samples, seed)
    return {"code": code_version(), "data_file": _portable(second_path), "metric": name,
            "unit": UNIT_KINDS.get(type(first_metric).__name__, "unit"),
            "a": {**_identity(Path(run_a), first), name: result.a},
            "b": {**_identity(Path(run_b), second), name: result.b},
            "bootstrap": result.as_dict()}
