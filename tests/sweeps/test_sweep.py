"""elmo-exp sweep: a 2 x 2 grid on the NER sample through submitit's local executor, killed
midway and resumed; a failing cell retried once and reported; the summary's statistics."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elmo_experiments.sweeps.spec import load_sweep
from elmo_experiments.sweeps.summary import stats

pytest.importorskip("submitit")
REPO = Path(__file__).resolve().parents[2]
FAST = ["trainer.num_epochs=2", "trainer.patience=null", "trainer.progress_bar=false",
        "trainer.tensorboard=false", "data_loader.batch_size=16"]


def _spec(tmp_path: Path, variants: dict, seeds: list[int], workers: int = 2) -> Path:
    spec = {"name": "grid", "config": str(REPO / "experiments" / "ner_baseline.jsonnet"),
            "overrides": FAST, "variants": variants, "seeds": seeds,
            "metrics": ["best_validation_f1", "test_f1"], "workers": workers}
    path = tmp_path / "grid.jsonnet"
    path.write_text(json.dumps(spec))
    return path


def _elmo_exp(*args: str, **env: str) -> subprocess.CompletedProcess:
    """The command in a subprocess on the embedded samples, with no inherited activation cache
    (``env``: variables to set)."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("ELMO_DATA_DIR",
                                                                 "ELMO_ACTIVATION_CACHE")}
    return subprocess.run([sys.executable, "-m", "elmo_experiments", *args],
                          capture_output=True, text=True, env={**inherited, **env}, timeout=600)


def _sweep(spec: Path, root: Path, fault: str | None = None, *args: str
           ) -> subprocess.CompletedProcess:
    return _elmo_exp("sweep", str(spec), "-s", str(root), *args,
                     **({"ELMO_FAULT_AT": fault} if fault else {}))


@pytest.mark.slow  # about a minute of worker processes; make test-all (CI) runs it
def test_a_killed_grid_resumes(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {"a": {}, "b": {"overrides": ["model.dropout=0.2"]}}, [1, 2],
                 workers=1)  # one worker: the first cell dies in epoch 2, twice
    root = tmp_path / "sweep"
    killed = _sweep(spec, root, fault="trainer:epoch:2:batch:1")
    assert killed.returncode == 1
    summary = json.loads((root / "summary.json").read_text())
    assert {c["status"] for c in summary["cells"]} == {"interrupted"}
    assert any((root / c["name"] / "last.pt").is_file() for c in summary["cells"])

    resumed = _sweep(spec, root)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((root / "summary.json").read_text())
    assert [c["name"] for c in summary["cells"]] == [
        "a-frac1-seed1", "a-frac1-seed2", "b-frac1-seed1", "b-frac1-seed2"]
    assert [c["status"] for c in summary["cells"]] == ["recovered", "trained", "trained",
                                                       "trained"]
    for cell in summary["cells"]:
        record = json.loads((root / cell["name"] / "run.json").read_text())
        assert len(record["sessions"]) in (1, 3)  # fresh, or killed twice and recovered
        metrics = json.loads((root / cell["name"] / "metrics.json").read_text())
        assert metrics["epochs_completed"] == 2
    groups = {g["variant"]: g for g in summary["groups"]}
    assert set(groups) == {"a", "b"} and groups["a"]["seeds"] == [1, 2]
    values = [json.loads((root / f"a-frac1-seed{s}" / "metrics.json").read_text())["test_f1"]
              for s in (1, 2)]
    assert groups["a"]["metrics"]["test_f1"] == stats(values)
    assert "| a | 1 |" in resumed.stdout
    for cell in summary["cells"]:  # the convergence rule's figures, from the run directory
        assert cell["run"]["epochs"]["cap"] == 2 and cell["run"]["epochs"]["run"] == 2
    assert groups["a"]["not_converged"] == [1, 2]  # a 2-epoch cap lies within any patience

    again = _sweep(spec, root)  # nothing left to do: every cell is skipped
    assert again.returncode == 0
    assert {c["status"] for c in json.loads((root / "summary.json").read_text())["cells"]} \
        == {"skipped"}


@pytest.mark.slow  # four sweeps of submitit workers (25 s); make test-all (CI) runs it
def test_a_failing_cell_is_retried_once_and_reported(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {"ok": {}, "broken": {"overrides": ["train_data_path=/no/such"]}},
                 [1])
    root = tmp_path / "sweep"
    done = _sweep(spec, root)
    assert done.returncode == 1
    summary = json.loads((tmp_path / "sweep" / "summary.json").read_text())
    status = {c["variant"]: c for c in summary["cells"]}
    assert status["ok"]["status"] == "trained"
    assert status["broken"]["status"] == "failed"
    assert "/no/such" in status["broken"]["error"]
    assert status["broken"]["attempts"] == 2  # tried again before it was reported
    logs = "".join(p.read_text() for p in (tmp_path / "sweep" / "submitit").rglob("*_log.err"))
    assert "broken-frac1-seed1: attempt 2 failed" in logs

    narrowed = _sweep(spec, tmp_path / "sweep", None, "--only", "ok")  # nothing to train
    assert narrowed.returncode == 0, narrowed.stderr
    summary = json.loads((tmp_path / "sweep" / "summary.json").read_text())
    assert [(c["variant"], c["status"]) for c in summary["cells"]] == [("broken", "not run"),
                                                                      ("ok", "skipped")]
    assert [g["variant"] for g in summary["groups"]] == ["ok"]  # the whole spec's results

    before = sorted(p.name for p in root.iterdir())
    written = _sweep(spec, root, None, "--summary-only", "--seed", "1")  # runs nothing
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in root.iterdir()) == before
    summary = json.loads((root / "summary.json").read_text())
    assert [(c["variant"], c["status"]) for c in summary["cells"]] == [("broken", "not run"),
                                                                      ("ok", "skipped")]
    assert summary["command"].endswith(" --seed 1") and "--summary-only" not in summary["command"]
    (root / "ok-frac1-seed1" / "metrics.json").unlink()  # as a cell still training is
    _sweep(spec, root, None, "--summary-only")
    summary = json.loads((root / "summary.json").read_text())
    assert summary["cells"][1]["status"] == "unfinished"


def test_cells_commands_and_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path, {"a": {"ext_vars": {"ELMO_SIZE": "cpu"}}}, [3, 4])
    grid = load_sweep(spec)
    assert [c.name for c in grid.cells] == ["a-frac1-seed3", "a-frac1-seed4"]
    command = grid.cells[0].command(Path("x"))
    assert "-o random_seed=3" in command and "--ext-var ELMO_SIZE=cpu" in command
    config = Path(grid.cells[0].config)
    monkeypatch.chdir(tmp_path)  # the config outside the working directory: as resolved
    assert f"train {config} -s x" in grid.cells[0].command(Path("x"))
    monkeypatch.chdir(config.parent)  # below it: relative, naming no machine's folders
    assert grid.cells[0].command(Path("x")).startswith(f"elmo-exp train {config.name} -s x ")
    assert stats([1.0, 3.0]) == {"mean": 2.0, "std": pytest.approx(2 ** 0.5), "n": 2,
                                 "values": [1.0, 3.0]}
    printed = subprocess.run([sys.executable, "-m", "elmo_experiments", "sweep", str(spec),
                              "-s", str(tmp_path / "s"), "--print-commands"],
                             capture_output=True, text=True, timeout=120)
    assert printed.stdout.count("elmo-exp train") == 2


def test_bad_specs_name_every_problem(tmp_path: Path) -> None:
    from elmo_experiments.errors import ConfigError

    path = tmp_path / "bad.jsonnet"
    path.write_text(json.dumps({"name": "x", "config": "nowhere.jsonnet", "seeds": [],
                                "fractions": [2.0], "variantz": {}}))
    with pytest.raises(ConfigError) as info:
        load_sweep(path)
    text = str(info.value)
    assert "variantz: unknown parameter; did you mean variants?" in text
    assert "seeds: at least one is needed" in text
    assert "fractions: 2 is outside [1e-09, 1.0]" in text


@pytest.mark.parametrize("spec", sorted((REPO / "experiments" / "ablations").glob("*.jsonnet")),
                         ids=lambda p: p.stem)
def test_every_ablation_spec_builds_valid_configs(spec: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments.config.loader import load_config
    from elmo_experiments.experiment import validate_experiment

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)  # the samples' paths
    grid = load_sweep(spec)
    assert grid.name == spec.stem
    for cell in {c.variant: c for c in grid.cells}.values():  # one cell per variant
        ext_vars = dict(cell.ext_vars)
        made = {"elmo_finetuned": f"runs/bilm_finetuned/{grid.name.removesuffix('_main')}/bilm",
                "elmo_wide": "runs/bilm_wide/bilm"}  # made beforehand
        if cell.variant in made:  # the shipped biLM stands in
            assert ext_vars["ELMO_WEIGHTS"] == made[cell.variant]
            ext_vars["ELMO_WEIGHTS"] = "gutenberg"
        config = load_config(cell.config, ext_vars, list(cell.overrides))
        validate_experiment(config, source=cell.name)


def test_only_restricts_the_grid_to_named_variants(tmp_path: Path) -> None:
    from elmo_experiments.errors import ConfigError

    spec = _spec(tmp_path, {"a": {}, "b": {"overrides": ["model.dropout=0.3"]}}, [1, 2])
    grid = load_sweep(spec)
    assert [c.name for c in grid.only(["b"]).cells] == ["b-frac1-seed1", "b-frac1-seed2"]
    assert grid.only([]).cells == grid.cells
    with pytest.raises(ConfigError, match=r"--only c: the sweep 'grid' has no such variant "
                                          r"\(it has a, b\)"):
        grid.only(["c"])
    assert [c.name for c in grid.only([], [2]).cells] == ["a-frac1-seed2", "b-frac1-seed2"]
    assert [c.name for c in grid.only(["a"], [1], [1.0]).cells] == ["a-frac1-seed1"]
    with pytest.raises(ConfigError) as caught:
        grid.only(["a"], [5], [0.5])
    assert caught.value.problems == [
        "--seed 5: the sweep 'grid' has no such seed (it has 1, 2)",
        "--fraction 0.5: the sweep 'grid' has no such fraction (it has 1)"]
    printed = subprocess.run([sys.executable, "-m", "elmo_experiments", "sweep", str(spec),
                              "-s", str(tmp_path / "s"), "--print-commands", "--only", "a",
                              "--seed", "2"],
                             capture_output=True, text=True, timeout=120)
    assert printed.stdout.count("elmo-exp train") == 1 and "dropout" not in printed.stdout
    assert "random_seed=2" in printed.stdout


@pytest.mark.slow  # three sweeps of submitit workers (25 s); make test-all (CI) runs it
def test_the_cells_of_a_sweep_share_an_activation_cache(tmp_path: Path,
                                                        tiny_bilm_dir: Path) -> None:
    """--activation-cache reaches the workers: the ELMo cells' activations land in one disk
    folder, written by the first cell and only read by the second."""
    spec = tmp_path / "grid.jsonnet"
    spec.write_text(json.dumps({
        "name": "grid", "config": str(REPO / "experiments" / "ner.jsonnet"),
        "ext_vars": {"ELMO_WEIGHTS": str(tiny_bilm_dir)}, "variants": {"elmo": {}},
        "seeds": [1, 2], "workers": 1, "metrics": ["best_validation_f1"],
        "overrides": [*FAST[:-1], "trainer.num_epochs=1", "data_loader.batch_size=32"]}))
    cache = tmp_path / "activations"
    printed = _sweep(spec, tmp_path / "s", None, "--activation-cache", str(cache),
                     "--print-commands")
    assert printed.stdout.count(f"ELMO_ACTIVATION_CACHE={cache} ") == 2, printed.stdout
    written = {}
    for seed in (1, 2):
        result = _sweep(spec, tmp_path / "s", None, "--activation-cache", str(cache),
                        "--seed", str(seed))
        assert result.returncode == 0, result.stderr
        written[seed] = {f: f.stat().st_mtime_ns for f in cache.rglob("*.npy")}
    assert written[1] and written[2] == written[1]  # the second cell computed nothing anew


def _entries(folder: Path) -> set[Path]:
    return {f.relative_to(folder) for f in folder.rglob("*.npy")}


def test_a_filled_cache_holds_exactly_what_a_run_reads(tmp_path: Path,
                                                       tiny_bilm_dir: Path) -> None:
    """`elmo-exp fill-cache` and a training run of the same config (half the training data,
    no test evaluation) compute the same entries into empty folders; a second fill computes
    nothing."""
    config = [str(REPO / "experiments" / "ner.jsonnet"),
              "--ext-var", f"ELMO_WEIGHTS={tiny_bilm_dir}", "-o", "train_data_fraction=0.5",
              "-o", "evaluate_on_test=false"]
    trained = _elmo_exp("train", *config, "-s", str(tmp_path / "run"), "-o",
                        "trainer.num_epochs=1", "-o", "trainer.progress_bar=false",
                        ELMO_ACTIVATION_CACHE=str(tmp_path / "by_training"))
    assert trained.returncode == 0, trained.stderr
    fill = [*config, "--activation-cache", str(tmp_path / "filled"), "--threads", "1",
            "-o", "data_loader.batch_size=7"]  # other batches than training's: same keys
    first = _elmo_exp("fill-cache", *fill)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["activation_cache"] == [str((tmp_path / "filled").resolve())]
    assert set(report) == {"activation_cache", "train", "validation"}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert report["train"]["instances"] == metrics["data"]["train_instances"]
    filled = _entries(tmp_path / "filled")
    assert filled == _entries(tmp_path / "by_training") and filled
    # a sentence twice in one batch is computed twice and stored once
    assert len(filled) <= report["train"]["computed"] + report["validation"]["computed"]
    again = json.loads(_elmo_exp("fill-cache", *fill).stdout)
    assert [again[s]["computed"] for s in ("train", "validation")] == [0, 0]
    assert again["train"]["cached"] == report["train"]["cached"] + report["train"]["computed"]


@pytest.mark.parametrize("config", [["ner_baseline.jsonnet"],
                                    ["ner.jsonnet", "-o", "model.token_embedders.elmo.cache."
                                     "enabled=false"]])
def test_filling_a_cache_needs_a_frozen_cached_encoder(tmp_path: Path, tiny_bilm_dir: Path,
                                                       config: list[str]) -> None:
    result = _elmo_exp("fill-cache", str(REPO / "experiments" / config[0]), *config[1:],
                       "--ext-var", f"ELMO_WEIGHTS={tiny_bilm_dir}",
                       "--activation-cache", str(tmp_path / "activations"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "nothing to fill" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_cell_runs_with_the_threads_it_is_given(tmp_path: Path) -> None:
    import torch

    from elmo_experiments.config.paths import portable_paths
    from elmo_experiments.sweeps.execute import cell_config, run_cell

    cell = load_sweep(_spec(tmp_path, {"a": {}}, [1])).cells[0]
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "metrics.json").write_text("{}")  # finished with the spec's config
    (tmp_path / "done" / "model.tar.gz").write_bytes(b"")
    (tmp_path / "done" / "config.json").write_text(json.dumps(portable_paths(cell_config(cell))))
    before = torch.get_num_threads()
    try:
        assert run_cell(cell, tmp_path / "done", threads=1)["status"] == "skipped"
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_a_cell_stopped_by_a_signal_is_interrupted_not_retried(tmp_path: Path, monkeypatch
                                                               ) -> None:
    from elmo_experiments.errors import TrainingStopped
    from elmo_experiments.sweeps import execute

    calls = []

    def stopped(*args, **kwargs):
        calls.append(args)
        raise TrainingStopped("stopped by SIGTERM after batch 3 of epoch 1", exit_code=143)

    monkeypatch.setattr("elmo_experiments.run.train", stopped)
    cells = load_sweep(_spec(tmp_path, {"a": {}}, [1, 2])).cells
    statuses = execute.run_cells([(c, tmp_path / c.name) for c in cells], threads=None)
    assert [s["status"] for s in statuses] == ["interrupted"]  # the second cell never started
    assert len(calls) == 1 and not (tmp_path / cells[0].name / "FAILED.json").exists()


def test_a_variant_shares_the_identical_runs_of_another_sweep(tmp_path: Path) -> None:
    from elmo_experiments.errors import ConfigError
    from elmo_experiments.sweeps.summary import render, summarize

    main = _spec(tmp_path, {"a": {}, "b": {"overrides": ["model.dropout=0.3"]}}, [1, 2])
    main.rename(tmp_path / "main.jsonnet")
    spec = _spec(tmp_path, {"a": {"same_as": "main.jsonnet:a"},
                            "c": {"overrides": ["model.dropout=0.1"]}}, [1, 2, 3])
    grid = load_sweep(spec)
    assert [(c.name, c.same_as) for c in grid.cells] == [
        ("a-frac1-seed1", "grid/a"), ("a-frac1-seed2", "grid/a"),
        ("a-frac1-seed3", None),  # seed 3 is not there: run here
        ("c-frac1-seed1", None), ("c-frac1-seed2", None), ("c-frac1-seed3", None)]
    assert [c.name for c in grid.own().cells] == ["a-frac1-seed3", "c-frac1-seed1",
                                                  "c-frac1-seed2", "c-frac1-seed3"]
    statuses = [{"cell": c.name, "status": "shared" if c.same_as else "not run"}
                for c in grid.cells]
    summary = summarize(grid, tmp_path / "s", statuses, "elmo-exp sweep grid.jsonnet")
    assert summary["groups"] == [{"variant": "a", "fraction": 1.0, "same_as": "grid/a",
                                  "seeds": [1, 2]}]
    assert summary["cells"][0]["same_as"] == "grid/a"
    assert "| a | 1 | see grid/a |" in render(summary)
    printed = subprocess.run([sys.executable, "-m", "elmo_experiments", "sweep", str(spec),
                              "-s", str(tmp_path / "s"), "--print-commands"],
                             capture_output=True, text=True, timeout=120)
    assert printed.stdout.count("elmo-exp train") == 4  # the shared cells are run there

    bad = _spec(tmp_path, {"a": {"same_as": "main.jsonnet:b"},
                           "x": {"same_as": "main.jsonnet:nothing"},
                           "y": {"same_as": "no-colon"}}, [1])
    with pytest.raises(ConfigError) as caught:
        load_sweep(bad)
    assert caught.value.problems == [
        "variants.a.same_as: a-frac1-seed1 is not the same run as main.jsonnet's "
        "b-frac1-seed1 (config, overrides or ext vars differ)",
        "variants.x.same_as: main.jsonnet has no variant 'nothing'",
        "variants.y.same_as: expected SPEC:VARIANT, got 'no-colon'"]


def test_an_earlier_summary_counts_its_finished_cells(tmp_path: Path) -> None:
    from elmo_experiments.errors import ConfigError
    from elmo_experiments.sweeps.spec import cell_settings
    from elmo_experiments.sweeps.summary import check_previous, previous_runs, summarize

    spec = _spec(tmp_path, {"a": {}}, [1, 2])
    grid = load_sweep(spec)
    mix = {"embedder.elmo": [{"weights": [0.2, 0.3, 0.5], "gamma": 0.7, "n": 1}]}
    old = {"sweep": "grid", "cells": [{**cell_settings(c), "name": c.name,
                                       "status": "trained" if c.seed == 1 else "not run"}
                                      for c in grid.cells],
           "groups": [{"variant": "a", "fraction": 1.0, "seeds": [1], "elmo_mixes": mix,
                       "metrics": {"test_f1": stats([80.0])}, "bilm_sha1": ["b1"],
                       "vectors_sha1": ["v1"], "commits": ["c1"], "embedded_sample": False}]}
    check_previous(old, grid, "old.json")
    earlier = previous_runs(old)  # a summary without per-cell entries: rebuilt from its groups
    assert list(earlier) == ["a-frac1-seed1"]
    assert earlier["a-frac1-seed1"]["metrics"] == {"test_f1": 80.0}
    statuses = [{"cell": c.name, "status": "previous" if c.seed == 1 else "not run"}
                for c in grid.cells]
    summary = summarize(grid, tmp_path / "s", statuses, "elmo-exp sweep", earlier)
    (group,) = summary["groups"]
    assert group["seeds"] == [1] and group["metrics"]["test_f1"]["mean"] == 80.0
    assert group["commits"] == ["c1"] and group["bilm_sha1"] == ["b1"]
    assert group["elmo_mixes"]["embedder.elmo"][0]["weights"] == [0.2, 0.3, 0.5]
    assert previous_runs(summary) == earlier  # the new summary keeps each cell's entry

    printed = subprocess.run([sys.executable, "-m", "elmo_experiments", "sweep", str(spec),
                              "-s", str(tmp_path / "s2"), "--print-commands", "--previous",
                              str(tmp_path / "s" / "summary.json")],
                             capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.count("elmo-exp train") == 1 and "random_seed=2" in printed.stdout

    old["cells"][0]["overrides"] = ["random_seed=1", "model.dropout=0.9"]
    old["sweep"] = "other"
    with pytest.raises(ConfigError) as caught:
        check_previous(old, grid, "old.json")
    assert caught.value.problems == [
        "it is the summary of sweep 'other', not 'grid'",
        "cell a-frac1-seed1: ran with other settings than the spec's"]


def test_a_summary_names_the_data_folder_by_its_variable(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from elmo_experiments.sweeps.summary import portable

    monkeypatch.setenv("ELMO_DATA_DIR", "/data/here/")
    assert portable("DataError: /data/here/ner/eng.testa: instance 3") == \
        "DataError: $ELMO_DATA_DIR/ner/eng.testa: instance 3"
    monkeypatch.delenv("ELMO_DATA_DIR")
    assert portable("/data/here/x") == "/data/here/x"


def test_a_failed_cell_is_tried_afresh_once_its_data_is_there(tmp_path: Path) -> None:
    from elmo_experiments.sweeps.execute import finished, run_cell

    train_file = tmp_path / "train.txt"
    cell = load_sweep(_spec(tmp_path, {"a": {"overrides": [f"train_data_path={train_file}"]}},
                            [1])).cells[0]
    run_dir = tmp_path / "sweep" / cell.name
    failed = run_cell(cell, run_dir)
    assert failed["status"] == "failed" and f"{train_file}: no such" in failed["error"]
    assert json.loads((run_dir / "FAILED.json").read_text())["error"] == failed["error"]
    shutil.copy(REPO / "reproduction" / "ner" / "sample" / "train.txt", train_file)
    again = run_cell(cell, run_dir)
    assert again == {"cell": cell.name, "status": "trained", "attempts": 1}
    assert not (run_dir / "FAILED.json").exists() and finished(cell, run_dir)


def test_a_cell_whose_spec_changed_is_not_finished(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A cell is finished when its config.json is the one the spec gives it now and its
    archive is written; a changed one is reported, not summarised, and needs --force."""
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)  # the samples, as the cells read
    from elmo_experiments.sweeps.execute import cell_state, run_cell
    from elmo_experiments.sweeps.summary import summarize

    two = load_sweep(_spec(tmp_path, {"a": {}}, [1])).cells[0]
    root = tmp_path / "sweep"
    run_dir = root / two.name
    assert run_cell(two, run_dir)["status"] == "trained"
    assert run_cell(two, run_dir)["status"] == "skipped"
    spec = _spec(tmp_path, {"a": {"overrides": ["trainer.num_epochs=3"]}}, [1])
    three = load_sweep(spec).cells[0]
    assert cell_state(three, run_dir) == "changed"
    status = run_cell(three, run_dir)
    assert status == {"cell": two.name, "status": "changed", "error": (
        f"{run_dir}: its config.json differs from the spec's at trainer.num_epochs; rerun the "
        f"sweep with --force to train the cell afresh, or give it a new sweep folder")}
    assert json.loads((run_dir / "metrics.json").read_text())["epochs_completed"] == 2
    assert summarize(load_sweep(spec), root, [status], "elmo-exp sweep")["groups"] == []
    swept = _sweep(spec, root)  # the command line says so, and trains nothing
    assert swept.returncode == 1, swept.stderr
    assert f"{two.name}: changed ({run_dir}: its config.json differs" in swept.stdout
    assert json.loads((run_dir / "metrics.json").read_text())["epochs_completed"] == 2
    printed = _sweep(spec, root, None, "--print-commands")
    assert printed.stdout == "" and "# " + status["error"] in printed.stderr
    printed = _sweep(spec, root, None, "--print-commands", "--force")
    assert printed.stdout.startswith("elmo-exp train ") and " --force " in printed.stdout

    assert run_cell(three, run_dir, force=True)["status"] == "trained"
    assert json.loads((run_dir / "metrics.json").read_text())["epochs_completed"] == 3
    (run_dir / "model.tar.gz").unlink()  # metrics written, the archive not yet
    assert cell_state(three, run_dir) == "started"
    assert run_cell(three, run_dir)["status"] == "recovered"
    assert (run_dir / "model.tar.gz").is_file() and cell_state(three, run_dir) == "finished"


def test_a_cell_job_checkpoints_to_the_same_call() -> None:
    """submitit's checkpointing hook: on preemption or at the time limit the job is resubmitted
    as the same call, which resumes its cells (an unfinished one with --recover)."""
    import cloudpickle
    from submitit.helpers import DelayedSubmission

    from elmo_experiments.sweeps.execute import CellJob, run_cell
    from elmo_experiments.sweeps.spec import Cell

    job = CellJob(run_cell)
    cell = Cell("a", 1, 1.0, "x.jsonnet", ("random_seed=1",))
    again = job.checkpoint(cell, Path("runs/a"), None, False)
    assert isinstance(again, DelayedSubmission)
    assert again.function is job and again.args == (cell, Path("runs/a"), None, False)
    restored = cloudpickle.loads(cloudpickle.dumps(again))  # as submitit stores it
    assert restored.function.function is run_cell and restored.args == again.args


@pytest.mark.slow  # a sweep's worker preempted and requeued, and a straight run to compare
def test_a_preempted_cell_is_requeued_and_resumes_exactly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The preemption signal (SIGUSR2) reaches a cell mid-epoch under submitit's local
    executor: training stops after the batch with last.pt there, submitit checkpoints and
    requeues the job, and the requeued job recovers the cell to the uninterrupted result."""
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)  # the samples, as the cells read
    from elmo_experiments.sweeps.execute import run_cell

    spec = _spec(tmp_path, {"a": {}}, [1], workers=1)
    root = tmp_path / "sweep"
    preempted = _elmo_exp("sweep", str(spec), "-s", str(root), "--threads", "1",
                          ELMO_FAULT_AT="trainer:epoch:2:batch:1", ELMO_FAULT_SIGNAL="SIGUSR2")
    assert preempted.returncode == 0, preempted.stderr
    (cell,) = json.loads((root / "summary.json").read_text())["cells"]
    assert cell["status"] == "recovered"
    logs = "".join(p.read_text() for p in (root / "submitit").rglob("*_log.*"))
    assert "stopped by SIGUSR2 after batch 1 of epoch 2" in logs
    assert "Requeued job" in logs and "recovered after batch 1 of epoch 2" in logs
    record = json.loads((root / cell["name"] / "run.json").read_text())
    assert len(record["sessions"]) == 2
    straight = tmp_path / "straight"
    run_cell(load_sweep(spec).cells[0], straight)
    for name in ("metrics_epoch_1.json", "metrics_epoch_2.json"):
        got, want = (json.loads((d / name).read_text()) for d in (root / cell["name"], straight))
        assert got["validation_loss"] == want["validation_loss"]
        assert got["training_loss"] == pytest.approx(want["training_loss"], rel=1e-6)


def test_a_cell_another_process_holds_is_busy_not_failed(tmp_path: Path) -> None:
    """A worker of an earlier sweep (its main process killed) still trains the cell: the
    rerun leaves it alone and names that worker."""
    from elmo_experiments.sweeps.execute import run_cell

    cell = load_sweep(_spec(tmp_path, {"a": {}}, [1])).cells[0]
    run_dir = tmp_path / "sweep" / cell.name
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom elmo_experiments.training.run_lock import acquire\n"
        "acquire(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(600)\n"), str(run_dir)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        status = run_cell(cell, run_dir)
        assert status["status"] == "busy"
        assert status["error"].startswith(f"{run_dir}: in use by process {holder.pid} on ")
        assert sorted(p.name for p in run_dir.iterdir()) == ["run.lock"]  # no FAILED.json
    finally:
        holder.kill()
        holder.wait()


def test_a_cells_config_follows_the_environment(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The config a cell is compared against is read afresh: with ELMO_DATA_DIR set a cell reads
    the data, without it the samples, and a cell trained on one is not `changed` by the other."""
    from elmo_experiments.sweeps.execute import cell_config

    cell = load_sweep(_spec(tmp_path, {"a": {}}, [1])).cells[0]
    monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path / "data"))
    with_data = cell_config(cell)["train_data_path"]
    monkeypatch.delenv("ELMO_DATA_DIR")
    without = cell_config(cell)["train_data_path"]
    assert with_data.startswith(str(tmp_path / "data")) and "sample" in without
