"""Device names, one rule for every command: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (a GPU
when there is one, else the CPU); AllenNLP's integer ``cuda_device`` (-1: CPU) as an alias."""

from __future__ import annotations

import torch

from elmo_experiments.errors import ConfigError

DEVICE_DOC = "cpu, cuda, cuda:N, or auto (a GPU when there is one, else the CPU)"


def from_cuda_device(index: int) -> str:
    """AllenNLP's ``cuda_device``: -1 (or any negative) is the CPU, N the N-th GPU."""
    return "cpu" if index < 0 else f"cuda:{index}"


def resolve_device(name: str, key: str = "trainer.device") -> torch.device:
    """The device ``name`` means on this machine; a one-line config error if it lacks it."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError([f"{key}: {name!r} is not a device name ({DEVICE_DOC})"]) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError([f"{key}: {name!r}, but CUDA is not available here (use cpu or auto)"])
    if device.type == "cuda" and device.index is not None and \
            device.index >= torch.cuda.device_count():
        raise ConfigError([f"{key}: {name!r}, but this machine has "
                           f"{torch.cuda.device_count()} CUDA devices"])
    if device.type not in ("cpu", "cuda"):
        raise ConfigError([f"{key}: {name!r} is not supported ({DEVICE_DOC})"])
    return device


def trainer_device(settings: dict[str, object]) -> torch.device:
    """``trainer.device``, or ``trainer.cuda_device`` when that is given instead."""
    cuda_device = settings.get("cuda_device")
    if cuda_device is None:
        return resolve_device(str(settings["device"]))
    if settings["device"] != "auto":
        raise ConfigError(["trainer.cuda_device: give device or cuda_device, not both"])
    return resolve_device(from_cuda_device(int(cuda_device)), "trainer.cuda_device")
