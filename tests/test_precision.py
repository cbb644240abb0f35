"""bf16: the fused recurrence under autocast, the biLM in bf16, and a bf16 pretraining run stay
close to fp32 (bf16 keeps 8 bits of mantissa: about 0.4% per rounding); on a CPU without bf16
matrix units (flags patched in) bf16 runs in fp32 unless ELMO_FORCE_BF16=1 insists."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments import precision as precision_module
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.lstm import ProjectedLstm
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.data.batching import Batch
from elmo_experiments.precision import FORCE_BF16, autocast, effective_precision, native_bf16
from elmo_experiments.training.trainer import Trainer

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


# -- bf16 where the CPU has no bf16 matrix units ------------------------------------------------
ICE_LAKE = frozenset({"avx2", "avx512f", "avx512bw", "avx512_vnni"})  # AVX-512, no BF16, no AMX
SAPPHIRE_RAPIDS = frozenset({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})
FALLBACK = ("bf16 requested, but this CPU has no bf16 matrix units (no AMX, no AVX-512 BF16), "
            "where bf16 is slower than fp32: running in fp32 (set ELMO_FORCE_BF16=1 to run bf16 "
            "anyway)")


@pytest.fixture()
def cpu(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``cpu(flags)``: the CPU flags the detection sees; warnings not yet given."""
    monkeypatch.delenv(FORCE_BF16, raising=False)
    monkeypatch.setattr(precision_module, "_warned", set())

    def use(flags: frozenset[str] | None) -> None:
        monkeypatch.setattr(precision_module, "cpu_flags", lambda: flags)

    return use


def test_the_flags_of_proc_cpuinfo() -> None:
    x86 = "processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 amx_tile\n\nprocessor\t: 1\n"
    assert precision_module.flags_of(x86) == {"fpu", "avx512f", "avx512_bf16", "amx_tile"}
    arm = "Features\t: fp asimd sve bf16\n"
    assert precision_module.flags_of(arm) == {"fp", "asimd", "sve", "bf16"}
    assert precision_module.flags_of("processor\t: 0\n") is None


def test_native_bf16_means_the_matrix_units_not_onednn_support(cpu) -> None:
    cpu(ICE_LAKE)  # oneDNN answers "supported" on such a CPU: bf16 is emulated there
    assert not native_bf16()
    cpu(frozenset({"avx512f", "avx512_bf16"}))
    assert native_bf16()
    cpu(SAPPHIRE_RAPIDS)
    assert native_bf16()


def test_bf16_falls_back_to_fp32_with_one_warning(cpu, caplog) -> None:
    cpu(ICE_LAKE)
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"):
        assert effective_precision("bf16") == "fp32"
        with autocast("bf16"):
            assert not torch.is_autocast_enabled("cpu")
    assert caplog.messages == [FALLBACK]
    assert effective_precision("fp32") == "fp32" and effective_precision(None) is None


def test_elmo_force_bf16_insists(cpu, caplog, monkeypatch) -> None:
    cpu(ICE_LAKE)
    monkeypatch.setenv(FORCE_BF16, "1")
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"), autocast("bf16"):
        assert torch.is_autocast_enabled("cpu")
    assert caplog.messages == ["bf16 requested, but this cpu has no bf16 matrix units: products "
                               "are emulated and much slower than fp32"]


def test_where_the_units_are_bf16_runs_without_a_warning(cpu, caplog) -> None:
    cpu(SAPPHIRE_RAPIDS)
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"), autocast("bf16"):
        assert torch.is_autocast_enabled("cpu")
    assert caplog.messages == []


def test_the_bilm_precision_bf16_runs_in_fp32_without_the_units(cpu, tiny_bilm_dir: Path
                                                                ) -> None:
    cpu(ICE_LAKE)
    bilm = load_bilm(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
    runner = BilmRunner(bilm, "stateless", precision="bf16")
    assert runner.precision == "fp32" and runner.state_key() == "stateless"  # fp32 cache keys
    assert {p.dtype for p in runner.bilm.parameters()} == {torch.float32}


class AutocastProbe(torch.nn.Module):
    """Records whether each training step's forward ran under autocast."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.metrics: list[Any] = []
        self.autocast: list[bool] = []

    def forward(self, **_: Any) -> dict[str, Any]:
        self.autocast.append(torch.is_autocast_enabled("cpu"))
        return {"loss": (self.w - 1.0).pow(2).sum()}


class TwoBatches:
    def batches(self, epoch: int):  # type: ignore[no-untyped-def]
        for step in range(2):
            yield Batch({}, {}, 1, [step], [{}])

    def num_batches(self, epoch: int) -> int:
        return 2

    def __len__(self) -> int:
        return 2


@pytest.mark.parametrize(("flags", "autocast_on"), [(ICE_LAKE, False), (SAPPHIRE_RAPIDS, True)])
def test_trainer_amp_bf16_follows_the_units(cpu, tmp_path: Path, flags, autocast_on) -> None:
    cpu(flags)
    model = AutocastProbe()
    settings = {"num_epochs": 1, "patience": None, "validation_metric": "-loss",
                "grad_norm": None, "grad_clipping": None, "on_nonfinite": "stop",
                "progress_bar": False, "amp": "bf16"}
    Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), None, TwoBatches(), None,
            settings, tmp_path, []).train()
    assert model.autocast == [autocast_on] * 2
