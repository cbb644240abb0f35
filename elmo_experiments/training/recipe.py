"""The one owner of a training session; task training and pretraining are its assemblies.

``run_session`` takes a session's lifecycle through, in this order: look at the run directory
(``--force``/``--recover``), lock it, seed, let the assembly build everything that can fail on
the config or the data (nothing is wiped before), open the run (``config.json``, ``run.json``),
fit, summarise, let the assembly conclude (test evaluation, export), and finish
(``metrics.json``). An ``Assembly`` holds what differs: the data, the vocabulary, the model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from elmo_experiments.training.distributed import SINGLE, World, stop_on_lost_rank
from elmo_experiments.training.evaluation import Loader
from elmo_experiments.training.run_dir import check_run_dir, describe
from elmo_experiments.training.run_lock import run_dir_lock
from elmo_experiments.training.session import (
    Setup,
    finish,
    fit,
    open_run,
    seed_everything,
    setup_logging,
    summary,
)
from elmo_experiments.training.trainer import Trainer


@dataclass
class SessionRequest:
    """What a session is asked to do: the run directory and how to treat it, the resolved
    config (written as ``config.json``) and what ``run.json`` records of this start."""

    run_dir: Path
    config: dict[str, Any]
    source: str  # the config file, for messages
    what: dict[str, Any]  # run_identity.identity(...) of this start
    seeds: dict[str, Any]  # random_seed, numpy_seed, pytorch_seed
    trainer: dict[str, Any]  # the validated trainer settings
    force: bool = False
    recover: bool = False
    world: World = SINGLE


@dataclass
class Built:
    """An assembly's pieces, built before the run directory changes: the trainer's setup,
    what to write before ``config.json`` (the vocabulary), and entries staged in the run
    directory that opening it keeps."""

    setup: Setup
    write_first: Callable[[], None]
    keep: tuple[str, ...] = ()


@dataclass
class Opened:
    """What training reads once the run directory is open: the loaders, and the digest of
    the run's saved vocabulary (for the checkpoints' description)."""

    train: Loader
    validation: Loader | None
    vocabulary_digest: str | None


class Assembly(Protocol):
    """The part of a session that differs between task training and pretraining."""

    def assemble(self, request: SessionRequest, seed: int) -> Built:
        """Read the data, build the vocabulary and model and ``set_up`` the trainer: all that
        can fail on the config or the data."""
        ...

    def opened(self, recover: bool) -> Opened:
        """The loaders, once the run directory is open (``recover``: the run resumes)."""
        ...

    def conclude(self, trainer: Trainer, metrics: dict[str, Any]) -> dict[str, Any]:
        """``metrics`` (the summary of the fit) completed: test figures, exports."""
        ...

    def finished(self, metrics: dict[str, Any]) -> None:
        """After ``metrics.json`` is written (an archive)."""
        ...


def run_session(request: SessionRequest, assembly: Assembly) -> dict[str, Any]:
    """Train one run from start to finish; returns (and writes) ``metrics.json``'s contents.

    Under ``torchrun`` a rank that ends mid-run stops the others with one line
    (``stop_on_lost_rank``); the run directory is locked against other writers from its
    first change to the end (``run_lock``)."""
    world, run_dir = request.world, request.run_dir
    with stop_on_lost_rank(run_dir):  # another rank gone: one line, not gloo's tracebacks
        check_run_dir(run_dir, force=request.force, recover=request.recover)
        world.barrier()  # every rank has looked at the run directory before rank 0 changes it
        setup_logging(None, world)
        with run_dir_lock(run_dir, world):  # one writer at a time, from here to the end
            return _locked_session(request, assembly)


def _locked_session(request: SessionRequest, assembly: Assembly) -> dict[str, Any]:
    world, run_dir = request.world, request.run_dir
    seed = seed_everything(request.seeds)
    built = assembly.assemble(request, seed)
    # everything that can fail on the config or the data has been tried: now wipe or create
    recover = open_run(run_dir, request.force, request.recover, request.config, request.source,
                       request.what, built.write_first, world, keep=built.keep)
    opened = assembly.opened(recover)
    description = describe(request.config, opened.vocabulary_digest)
    trainer, best = fit(built.setup, opened.train, opened.validation, request.trainer,
                        run_dir, request.config, recover, description, world)
    metrics = assembly.conclude(trainer, summary(trainer, best))
    metrics = finish(trainer, run_dir, metrics)
    assembly.finished(metrics)
    return metrics
