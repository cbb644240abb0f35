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


class FakeRun:
    def __init__(self, run_id: str) -> None:
        self.id = run_id


class FakeWandb:
    """Records what ``wandb.init`` is asked; a new run id unless one is resumed."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def init(self, **kwargs) -> FakeRun:
        self.calls.append(kwargs)
        return FakeRun(kwargs.get("id") or f"run{len(self.calls)}")


def test_a_recovered_run_logs_into_the_same_wandb_run(tmp_path, monkeypatch):
    """The W&B run id is the callback's state (kept in ``last.pt``): a callback given it back
    on ``--recover`` resumes that run instead of starting a second one. (Both sessions in one
    process would leave W&B's first run open, which a real process exit closes: so W&B itself
    is stood in for here; ``test_offline_wandb_run`` runs the real one.)"""
    import sys

    from elmo_experiments.training.callbacks import WandbCallback

    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    first = WandbCallback()
    first.on_start(tmp_path, {})
    assert "id" not in fake.calls[0] and first.state_dict() == {"run_id": "run1"}
    resumed = WandbCallback()
    resumed.load_state_dict(first.state_dict())
    resumed.on_start(tmp_path, {})
    assert fake.calls[1]["id"] == "run1" and fake.calls[1]["resume"] == "allow"
    assert resumed.state_dict() == {"run_id": "run1"}
