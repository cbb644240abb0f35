"""Gradient accumulation against one larger batch; fp16 with its loss scale (clipping sees the
true gradients, the scale survives a checkpoint); bf16 training of the NER sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments.data.batching import Batch
from elmo_experiments.errors import TrainingStopped
from elmo_experiments.training.run_dir import load_checkpoint
from elmo_experiments.training.trainer import Trainer

torch.manual_seed(0)
X, Y = torch.randn(12, 3), torch.randn(12)


class Regression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.linear = torch.nn.Linear(3, 1)
        self.metrics: list[Any] = []

    def forward(self, rows: torch.Tensor, **_: Any) -> dict[str, Any]:
        predicted = self.linear(X[rows]).squeeze(-1)
        return {"loss": ((predicted - Y[rows]) ** 2).mean()}  # a mean over instances


class Fixed:
    def __init__(self, groups: list[list[int]]) -> None:
        self.groups = groups

    def batches(self, epoch: int):  # type: ignore[no-untyped-def]
        for group in self.groups:
            yield Batch({"rows": torch.tensor(group)}, {}, len(group), group, [{}] * len(group))

    def num_batches(self, epoch: int) -> int:
        return len(self.groups)

    def __len__(self) -> int:
        return len(self.groups)


def trained(groups: list[list[int]], tmp_path: Path, scale: float | None = None,
            **settings: Any) -> Regression:
    model = Regression()
    values = {"num_epochs": 1, "patience": None, "validation_metric": "-loss",
              "grad_norm": None, "grad_clipping": None, "on_nonfinite": "stop",
              "progress_bar": False, "amp": None, "accumulation_steps": 1, **settings}
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), None, Fixed(groups),
                      None, values, tmp_path, [])
    if scale is not None:
        trainer.scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    trainer.train_epoch(0)
    assert scale is None or trainer.scaler.get_scale() == scale, "the step was skipped"
    return model


def weights(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_two_accumulated_batches_step_as_their_union(tmp_path: Path) -> None:
    halves = trained([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], tmp_path,
                     accumulation_steps=2)
    whole = trained([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]], tmp_path)
    torch.testing.assert_close(weights(halves), weights(whole), rtol=0, atol=1e-6)
    unaccumulated = trained([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], tmp_path)
    assert not torch.allclose(weights(unaccumulated), weights(whole), atol=1e-4)


def test_the_epochs_last_step_averages_only_the_batches_it_has(tmp_path: Path) -> None:
    three = trained([[0, 1], [2, 3], [4, 5]], tmp_path, accumulation_steps=2)
    expected = trained([[0, 1, 2, 3], [4, 5]], tmp_path)
    torch.testing.assert_close(weights(three), weights(expected), rtol=0, atol=1e-6)


def test_fp16_clips_the_unscaled_gradients(tmp_path: Path) -> None:
    """With a loss scale of 2^10, clipping the scaled gradients would move the weights
    2^10 times less than ``grad_norm`` allows."""
    start = weights(Regression())
    model = trained([list(range(12))], tmp_path, scale=1024.0, amp="fp16", grad_norm=1e-3)
    moved = torch.linalg.vector_norm(weights(model) - start).item()
    assert moved == pytest.approx(0.1 * 1e-3, rel=1e-3)  # lr x the clipped norm


def test_an_fp16_overflow_skips_the_step_and_lowers_the_scale(tmp_path: Path) -> None:
    """The default first scale, 2^16, overflows this batch's fp16 bias gradient: the scaler
    skips the step (the weights stay, the step counts as skipped) and halves the scale; the
    next steps train at the lower scale."""
    model = Regression()
    start = weights(model)
    values = {"num_epochs": 1, "patience": None, "validation_metric": "-loss",
              "grad_norm": 1.0, "grad_clipping": None, "on_nonfinite": "stop",
              "progress_bar": False, "amp": "fp16", "accumulation_steps": 1}
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), None,
                      Fixed([list(range(12))]), None, values, tmp_path, [])
    with pytest.raises(TrainingStopped, match="every batch of the epoch was non-finite"):
        trainer.train_epoch(0)  # an epoch of nothing but overflows is a failure
    assert trainer.scaler.get_scale() == 2.0**15
    torch.testing.assert_close(weights(model), start, rtol=0, atol=0)
    trainer.train_loader = Fixed([list(range(12))] * 3)
    metrics = trainer.train_epoch(1)  # 2^15 does not overflow: three steps taken
    assert "skipped_batches" not in metrics and trainer.scaler.get_scale() == 2.0**15
    assert not torch.equal(weights(model), start)


def test_fp16_keeps_its_loss_scale_in_last_pt(tmp_path: Path) -> None:
    model = Regression()
    values = {"num_epochs": 1, "patience": None, "validation_metric": "-loss",
              "grad_norm": None, "grad_clipping": None, "on_nonfinite": "stop",
              "progress_bar": False, "amp": "fp16", "accumulation_steps": 1}
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), None,
                      Fixed([[0, 1], [2, 3]]), None, values, tmp_path, [])
    trainer.scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    trainer.train()
    saved = load_checkpoint(tmp_path / "last.pt")["scaler"]
    assert saved["scale"] == 1024.0
    again = Trainer(Regression(), torch.optim.SGD(model.parameters(), lr=0.1), None,
                    Fixed([[0, 1], [2, 3]]), None, values, tmp_path, [])
    again.restore()
    assert again.scaler.get_scale() == 1024.0


@pytest.mark.usefixtures("samples_only")
def test_bf16_trains_the_ner_sample_into_the_fp32_band(tmp_path: Path,
                                                       learned_ner_run: Path) -> None:
    """The same run as the shared fp32 one (12 epochs, batches of 4), in bf16."""
    import json

    from elmo_experiments.run import train

    args = ["trainer.num_epochs=12", "data_loader.batch_size=4", "trainer.progress_bar=false",
            "trainer.tensorboard=false", "trainer.amp=bf16"]
    config = json.loads((learned_ner_run / "config.json").read_text())
    assert config["trainer"].get("amp") is None and config["trainer"]["num_epochs"] == 12
    fp32 = json.loads((learned_ner_run / "metrics.json").read_text())
    f1 = {"fp32": fp32["best_validation_f1"],
          "bf16": train("experiments/ner_baseline.jsonnet", tmp_path / "bf16",
                        overrides=args)["best_validation_f1"]}
    assert f1["fp32"] > 20, f1
    assert abs(f1["bf16"] - f1["fp32"]) < 10, f1
