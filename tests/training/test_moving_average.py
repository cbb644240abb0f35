"""The moving average of the weights: its arithmetic, evaluation with it, and recovery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from elmo_experiments.contracts import Callback
from elmo_experiments.run import train
from elmo_experiments.training.moving_average import MovingAverage
from elmo_experiments.training.run_dir import load_checkpoint

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "experiments" / "ner_baseline.jsonnet"
FAST = ["trainer.num_epochs=2", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=8"]
AVERAGED = [*FAST, 'trainer.moving_average={"decay": 0.9}']


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch):
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


def test_shadows_follow_the_documented_recurrence():
    model = torch.nn.Linear(2, 1)
    model.bias.requires_grad_(False)  # frozen: not averaged
    average = MovingAverage(model, decay=0.9)
    assert average.names == ["weight"]
    expected = model.weight.detach().clone()
    for step, value in enumerate([1.0, -2.0, 0.5, 3.0] * 5):
        with torch.no_grad():
            model.weight.fill_(value)
        average.update(model)
        rate = min(0.9, (1 + step) / (10 + step))  # 0.1, 0.18, ... then 0.9
        expected = rate * expected + (1 - rate) * value
    torch.testing.assert_close(average.shadows["weight"], expected, rtol=0, atol=1e-6)
    weight = model.weight.detach().clone()
    with average.applied(model):
        torch.testing.assert_close(model.weight.detach(), expected, rtol=0, atol=1e-6)
    assert torch.equal(model.weight.detach(), weight)  # the raw weights are back

    again = MovingAverage(model, decay=0.9)
    again.load_state_dict(average.state_dict())
    assert again.updates == 20
    assert torch.equal(again.shadows["weight"], average.shadows["weight"])


def test_evaluation_and_best_use_the_average_training_does_not(tmp_path):
    plain = train(CONFIG, tmp_path / "plain", overrides=FAST)
    averaged = train(CONFIG, tmp_path / "averaged", overrides=AVERAGED)
    # training follows the raw weights, so its loss is the plain run's; validation differs
    assert averaged["training_loss"] == plain["training_loss"]
    assert averaged["best_validation_loss"] != plain["best_validation_loss"]
    last = load_checkpoint(tmp_path / "averaged" / "last.pt")
    best = load_checkpoint(tmp_path / "averaged" / "best.pt")
    shadows = last["moving_average"]["shadows"]
    assert shadows and last["moving_average"]["updates"] > 0
    if best["epoch"] == 2:  # the best epoch is the last: best.pt holds the final average
        for name, shadow in shadows.items():
            assert torch.equal(best["model"][name], shadow), name
    name = next(iter(shadows))
    assert not torch.equal(last["model"][name], shadows[name])  # last.pt: the raw weights


class StopAfterEpoch(Callback):
    def on_epoch(self, epoch, metrics):
        if epoch == 1:
            raise KeyboardInterrupt


def test_an_interrupted_averaged_run_recovers_exactly(tmp_path):
    reference = train(CONFIG, tmp_path / "reference", overrides=AVERAGED)
    with pytest.raises(KeyboardInterrupt):
        train(CONFIG, tmp_path / "stopped", overrides=AVERAGED, callbacks=[StopAfterEpoch()])
    recovered = train(CONFIG, tmp_path / "stopped", overrides=AVERAGED, recover=True)
    for key in ("best_validation_loss", "best_validation_f1", "training_loss"):
        assert recovered[key] == reference[key], key
    record = json.loads((tmp_path / "stopped" / "metrics_epoch_2.json").read_text())
    expected = json.loads((tmp_path / "reference" / "metrics_epoch_2.json").read_text())
    assert record["validation_loss"] == expected["validation_loss"]
