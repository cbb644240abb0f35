"""Optimizers and learning-rate schedulers selectable from config."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any

import torch

from elmo_experiments.config.registry import (
    NON_NEGATIVE,
    Bounds,
    Check,
    NonNegative,
    Positive,
    Probability,
    Size,
    below_one,
    pair,
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


@register("optimizer", "adam", context=("parameters",))
def adam(parameters: Parameters, lr: Positive = 1e-3,
         betas: Annotated[Sequence[float], Check(pair)] = (0.9, 0.999), eps: Positive = 1e-8,
         weight_decay: NonNegative = 0.0, amsgrad: bool = False,
         fused: bool = True) -> torch.optim.Optimizer:
    """Adam; ``fused``: torch's one-kernel update, the same arithmetic in one pass over each
    parameter (language-model pretraining: 43 -> 12 ms a step on 2 cores); false: torch's loop
    over the parameters, which rounds differently in the last bits (docs/speed.md)."""
    return _checked(torch.optim.Adam, parameters, lr=lr, betas=(betas[0], betas[1]), eps=eps,
                    weight_decay=weight_decay, amsgrad=amsgrad, fused=fused or None)


@register("optimizer", "sgd", context=("parameters",))
def sgd(parameters: Parameters, lr: Positive, momentum: NonNegative = 0.0,
        weight_decay: NonNegative = 0.0, nesterov: bool = False) -> torch.optim.Optimizer:
    return _checked(torch.optim.SGD, parameters, lr=lr, momentum=momentum,
                    weight_decay=weight_decay, nesterov=nesterov)


@register("optimizer", "adadelta", context=("parameters",))
def adadelta(parameters: Parameters, lr: Positive = 1.0, rho: Probability = 0.95,
             eps: Positive = 1e-6, weight_decay: NonNegative = 0.0) -> torch.optim.Optimizer:
    return _checked(torch.optim.Adadelta, parameters, lr=lr, rho=rho, eps=eps,
                    weight_decay=weight_decay)


@register("optimizer", "adagrad", context=("parameters",))
def adagrad(parameters: Parameters, lr: Positive = 0.2,
            initial_accumulator_value: NonNegative = 0.0,
            weight_decay: NonNegative = 0.0) -> torch.optim.Optimizer:
    return _checked(torch.optim.Adagrad, parameters, lr=lr, weight_decay=weight_decay,
                    initial_accumulator_value=initial_accumulator_value)


@register("lr_scheduler", "reduce_on_plateau", context=("optimizer", "mode"))
def reduce_on_plateau(
    optimizer: torch.optim.Optimizer, mode: str,
    factor: Annotated[float, Check(below_one)] = 0.5,
    patience: Annotated[int, Bounds(*NON_NEGATIVE)] = 2, min_lr: NonNegative = 0.0,
    threshold: NonNegative = 1e-4,
) -> torch.optim.lr_scheduler.ReduceLROnPlateau:
    """Steps on the validation metric once per epoch (``mode`` follows its +/- sign)."""
    return _checked(torch.optim.lr_scheduler.ReduceLROnPlateau, optimizer, mode=mode,
                    factor=factor, patience=patience, min_lr=min_lr, threshold=threshold)


@register("lr_scheduler", "step", context=("optimizer", "mode"))
def step(optimizer: torch.optim.Optimizer, mode: str, step_size: Size,
         gamma: Positive = 0.1) -> torch.optim.lr_scheduler.StepLR:
    """Multiplies the learning rate by ``gamma`` every ``step_size`` epochs."""
    del mode
    return _checked(torch.optim.lr_scheduler.StepLR, optimizer, step_size=step_size, gamma=gamma)
