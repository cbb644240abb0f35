"""The optional wandb callback logs offline into the run directory and never needs a network."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.contracts import Callback
from elmo_experiments.run import train
from elmo_experiments.training.run_dir import load_checkpoint

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


class StopInSecondEpoch(Callback):
    """Stops at epoch 2's end, before its checkpoint: last.pt holds epoch 1."""

    def on_epoch(self, epoch, metrics):
        if epoch == 2:
            raise KeyboardInterrupt


def test_a_recovered_run_logs_into_the_same_wandb_run(tmp_path, monkeypatch):
    """The W&B run id is the callback's state in ``last.pt``: ``--recover`` resumes that run
    instead of starting a second one."""
    pytest.importorskip("wandb")
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_dir = tmp_path / "run"
    overrides = ["trainer.num_epochs=3", "trainer.patience=null", "trainer.progress_bar=false",
                 "trainer.tensorboard=false",
                 '{"trainer": {"callbacks": [{"type": "wandb", "mode": "offline"}]}}']
    config = ROOT / "experiments" / "ner_baseline.jsonnet"
    with pytest.raises(KeyboardInterrupt):
        train(config, run_dir, overrides=overrides, callbacks=[StopInSecondEpoch()])
    states = load_checkpoint(run_dir / "last.pt")["callbacks"]
    (first_id,) = [state["run_id"] for key, state in states.items() if "WandbCallback" in key]
    assert first_id
    train(config, run_dir, overrides=overrides, recover=True)
    offline = sorted((run_dir / "wandb").glob("offline-run-*"))
    assert len(offline) == 2  # one folder a session, both of the one W&B run
    # offline-run-<time>-<id>, and a -N after it when two sessions start within a second
    assert {folder.name.split("-")[3] for folder in offline} == {first_id}
