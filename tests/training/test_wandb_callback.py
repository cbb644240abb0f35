"""The optional wandb callback logs offline into the run directory and never needs a network."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.run import train

ROOT = Path(__file__).resolve().parents[2]


def test_offline_wandb_run(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_dir = tmp_path / "run"
    train(ROOT / "experiments" / "ner_baseline.jsonnet", run_dir, overrides=[
        "trainer.num_epochs=1", "trainer.progress_bar=false",
        '{"trainer": {"callbacks": [{"type": "wandb", "mode": "offline", "name": "t"}]}}',
    ])
    offline = list((run_dir / "wandb").glob("offline-run-*"))
    assert len(offline) == 1
    assert any(offline[0].rglob("*.wandb"))
