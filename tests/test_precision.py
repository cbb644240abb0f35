"""bf16: the fused recurrence under autocast, the biLM in bf16, and a bf16 pretraining run stay
close to fp32 (bf16 keeps 8 bits of mantissa: about 0.4% per rounding)."""

from __future__ import annotations

from pathlib import Path

import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.lstm import ProjectedLstm
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.precision import autocast

SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["Hello", "world"]]


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().mean().detach() / b.abs().mean().detach())


def test_recurrence_under_bf16_autocast_is_close_to_fp32() -> None:
    layer = ProjectedLstm(16, 32, 8, cell_clip=3.0, proj_clip=3.0)
    layer.reset_parameters(torch.Generator().manual_seed(0))
    inputs = torch.randn(4, 7, 16, generator=torch.Generator().manual_seed(1))
    lengths = torch.tensor([7, 3, 5, 7])
    results = []
    for precision in ("fp32", "bf16"):
        layer.zero_grad()
        with autocast(precision):
            out, (h, c) = layer(inputs, lengths)
        assert out.dtype == h.dtype == c.dtype == torch.float32  # states stay in fp32
        out.pow(2).sum().backward()
        results.append([out, c, *(p.grad.clone() for p in layer.parameters())])
    for low, full in zip(results[1], results[0], strict=True):
        assert _relative(low, full) < 0.03
    assert torch.all(results[1][0][1, 3:] == 0)  # ended rows still output zero


def test_bilm_in_bf16_is_close_to_fp32(tiny_bilm_dir: Path) -> None:
    ids = batch_to_ids(SENTENCES)
    layers = {}
    for precision in ("fp32", "bf16"):
        bilm = load_bilm(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
        runner = BilmRunner(bilm, "stateless", precision=precision)
        with torch.no_grad():
            layers[precision], _ = runner(ids)
        assert runner.state_key() == ("stateless" if precision == "fp32" else "stateless|bf16")
    for low, full in zip(layers["bf16"], layers["fp32"], strict=True):
        assert low.dtype == torch.float32
        assert 0 < _relative(low, full) < 0.03  # really bf16, and close


def test_pretraining_with_bf16_amp_learns(tmp_path: Path) -> None:
    from elmo_experiments.bilm.pretraining.run import pretrain

    root = Path(__file__).resolve().parents[1]
    overrides = ["data_loader.batches_per_epoch=5", "trainer.progress_bar=false",
                 "trainer.num_epochs=2"]
    fp32 = pretrain(root / "experiments/bilm/tiny.jsonnet", tmp_path / "fp32",
                    overrides=overrides)
    bf16 = pretrain(root / "experiments/bilm/tiny.jsonnet", tmp_path / "bf16",
                    overrides=[*overrides, "trainer.amp=bf16"])
    last = bf16["best_validation_perplexity"]
    assert last < 200  # the untrained tiny biLM's perplexity is its vocabulary size (200)
    assert abs(last - fp32["best_validation_perplexity"]) / fp32["best_validation_perplexity"] \
        < 0.05
