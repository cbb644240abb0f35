"""Optimizers from config: the fused Adam update is the unfused one up to rounding."""

from __future__ import annotations

import torch

import elmo_experiments.components  # noqa: F401  (registers the optimizers)
from elmo_experiments.config.validate import Validator


def adam_steps(fused: bool, steps: int = 5) -> list[torch.Tensor]:
    torch.manual_seed(0)
    parameters = [torch.nn.Parameter(torch.randn(7, 5)), torch.nn.Parameter(torch.randn(5))]
    validator = Validator()
    spec = validator.component({"type": "adam", "lr": 0.01, "fused": fused}, "optimizer",
                               "trainer.optimizer")
    assert not validator.problems and spec is not None
    optimizer = spec.build(parameters=parameters)
    assert optimizer.defaults["fused"] == (fused or None)
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        for p in parameters:
            p.grad = torch.randn(p.shape, generator=generator)
        optimizer.step()
    return [p.detach().clone() for p in parameters]


def test_fused_adam_matches_the_unfused_update() -> None:
    plain, fused = adam_steps(False), adam_steps(True)
    for a, b in zip(plain, fused, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    assert not torch.equal(plain[0], adam_steps(False, steps=4)[0])  # the steps did move it


def test_adam_takes_the_fused_update_unless_told_not_to() -> None:
    validator = Validator()
    spec = validator.component({"type": "adam"}, "optimizer", "trainer.optimizer")
    assert not validator.problems and spec is not None
    assert spec.build(parameters=[torch.nn.Parameter(torch.zeros(2))]).defaults["fused"] is True
