"""reproduction/bilm/finetuning.py: the dev-text perplexities before and after a biLM's further
training, here with ``--run`` (one continued biLM for every task)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from task_scripts import load_script

from elmo_experiments.config.loader import PROJECT_ROOT

SHIPPED = PROJECT_ROOT / "elmo_experiments" / "bilm" / "models" / "gutenberg"


def test_a_continued_run_is_measured_on_each_task(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A "continued" run whose biLM is the shipped one itself: before and after must agree to
    the last digit, and the record names the run's config (relative to the project)."""
    for name in ("ELMO_DATA_DIR", "ELMO_VECTORS_DIR", "ELMO_WEIGHTS", "ELMO_SIZE"):
        monkeypatch.delenv(name, raising=False)  # the tasks' embedded samples
    run = tmp_path / "run"
    shutil.copytree(SHIPPED, run / "bilm")
    (run / "metrics.json").write_text(json.dumps({
        "init_from": {"name": "gutenberg"}, "corpus": {"tokens": {"train": 1234}},
        "training_duration_s": 60.0, "training_tokens_per_s": 20.6,
        "best_validation_perplexity": 70.83, "code": "abc"}))
    config = PROJECT_ROOT / "experiments" / "bilm" / "gutenberg_wide.jsonnet"
    (run / "run.json").write_text(json.dumps({"config": {"path": str(config)}}))
    output = tmp_path / "bilm_wide.json"
    script = load_script(PROJECT_ROOT / "reproduction" / "bilm" / "finetuning.py",
                         "bilm_finetuning_script")
    script.main(["ner", "--run", str(run), "--output", str(output)])
    data = json.loads(output.read_text())
    assert data["kind"] == "bilm_continued" and list(data["tasks"]) == ["ner"]
    assert data["command"] == (f"python reproduction/bilm/finetuning.py ner --run {run} "
                               f"--output {output}")
    row = data["tasks"]["ner"]
    assert row["before"] == row["after"] and row["biLM_before_sha1"] == row["biLM_after_sha1"]
    assert row["finetuning"]["config"] == "experiments/bilm/gutenberg_wide.jsonnet"
    assert row["finetuning"]["training_tokens"] == 1234
