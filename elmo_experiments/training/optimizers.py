"""Optimizers and learning-rate schedulers selectable from config."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from elmo_experiments.config.registry import (
    AT_LEAST_ONE,
    NON_NEGATIVE,
    PROBABILITY,
    Param,
    below_one,
    pair,
    positive,
    register,
)
from elmo_experiments.errors import ConfigValueError

Parameters = Iterable[torch.nn.Parameter]


def _checked(factory: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``factory(...)``; torch's refusal of a hyperparameter (a ValueError such as "Invalid
    learning rate") is a config value error."""
    try:
        return factory(*args, **kwargs)
    except ValueError as error:
        raise ConfigValueError(str(error)) from None


@register("optimizer", "adam", context=("parameters",), params=[
    Param("lr", float, 1e-3, check=positive), Param("betas", list, [0.9, 0.999], check=pair),
    Param("eps", float, 1e-8, check=positive), Param("weight_decay", float, 0.0,
                                                     bounds=NON_NEGATIVE),
    Param("amsgrad", bool, False),
    Param("fused", bool, True, doc="torch's one-kernel update: the same arithmetic in one pass "
          "over each parameter (biLM pretraining: 43 -> 12 ms a step on 2 cores); false: torch's "
          "loop over the parameters, which rounds differently in the last bits (docs/speed.md)")])
def adam(parameters: Parameters, lr: float = 1e-3, betas: Sequence[float] = (0.9, 0.999),
         eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
         fused: bool = True) -> torch.optim.Optimizer:
    return _checked(torch.optim.Adam, parameters, lr=lr, betas=(betas[0], betas[1]), eps=eps,
                    weight_decay=weight_decay, amsgrad=amsgrad, fused=fused or None)


@register("optimizer", "sgd", context=("parameters",), params=[
    Param("lr", float, check=positive), Param("momentum", float, 0.0, bounds=NON_NEGATIVE),
    Param("weight_decay", float, 0.0, bounds=NON_NEGATIVE), Param("nesterov", bool, False)])
def sgd(parameters: Parameters, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
        nesterov: bool = False) -> torch.optim.Optimizer:
    return _checked(torch.optim.SGD, parameters, lr=lr, momentum=momentum,
                    weight_decay=weight_decay, nesterov=nesterov)


@register("optimizer", "adadelta", context=("parameters",), params=[
    Param("lr", float, 1.0, check=positive), Param("rho", float, 0.95, bounds=PROBABILITY),
    Param("eps", float, 1e-6, check=positive),
    Param("weight_decay", float, 0.0, bounds=NON_NEGATIVE)])
def adadelta(parameters: Parameters, lr: float = 1.0, rho: float = 0.95, eps: float = 1e-6,
             weight_decay: float = 0.0) -> torch.optim.Optimizer:
    return _checked(torch.optim.Adadelta, parameters, lr=lr, rho=rho, eps=eps,
                    weight_decay=weight_decay)


@register("optimizer", "adagrad", context=("parameters",), params=[
    Param("lr", float, 0.2, check=positive),
    Param("initial_accumulator_value", float, 0.0, bounds=NON_NEGATIVE),
    Param("weight_decay", float, 0.0, bounds=NON_NEGATIVE)])
def adagrad(parameters: Parameters, lr: float = 0.2, initial_accumulator_value: float = 0.0,
            weight_decay: float = 0.0) -> torch.optim.Optimizer:
    return _checked(torch.optim.Adagrad, parameters, lr=lr, weight_decay=weight_decay,
                    initial_accumulator_value=initial_accumulator_value)


@register("lr_scheduler", "reduce_on_plateau", context=("optimizer", "mode"), params=[
    Param("factor", float, 0.5, check=below_one), Param("patience", int, 2, bounds=NON_NEGATIVE),
    Param("min_lr", float, 0.0, bounds=NON_NEGATIVE),
    Param("threshold", float, 1e-4, bounds=NON_NEGATIVE)])
def reduce_on_plateau(
    optimizer: torch.optim.Optimizer, mode: str, factor: float = 0.5, patience: int = 2,
    min_lr: float = 0.0, threshold: float = 1e-4,
) -> torch.optim.lr_scheduler.ReduceLROnPlateau:
    """Steps on the validation metric once per epoch (``mode`` follows its +/- sign)."""
    return _checked(torch.optim.lr_scheduler.ReduceLROnPlateau, optimizer, mode=mode,
                    factor=factor, patience=patience, min_lr=min_lr, threshold=threshold)


@register("lr_scheduler", "step", context=("optimizer", "mode"), params=[
    Param("step_size", int, bounds=AT_LEAST_ONE), Param("gamma", float, 0.1, check=positive)])
def step(optimizer: torch.optim.Optimizer, mode: str, step_size: int,
         gamma: float = 0.1) -> torch.optim.lr_scheduler.StepLR:
    """Multiplies the learning rate by ``gamma`` every ``step_size`` epochs."""
    del mode
    return _checked(torch.optim.lr_scheduler.StepLR, optimizer, step_size=step_size, gamma=gamma)
