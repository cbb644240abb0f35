"""The one owner of a training session; task training and pretraining are its assemblies.

``run_session`` takes a session's lifecycle through, in this order: look at the run directory
(``--force``/``--recover``), lock it, seed, let the assembly build everything that can fail on
the config or the data (nothing is wiped before), open the run (``config.json``, ``run.json``),
fit (the optimizer, scheduler and callbacks built from the ``trainer`` settings; resumed when
asked; the best weights reloaded), summarise, let the assembly conclude (test evaluation,
export), and finish (``metrics.json``). An ``Assembly`` holds what differs: the data, the
vocabulary, the model.
"""

from __future__ import annotations

import logging
import random
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from elmo_experiments.config.loader import load_config
from elmo_experiments.config.paths import absolute_paths
from elmo_experiments.cpu_runtime import tune_cpu_runtime
from elmo_experiments.devices import trainer_device
from elmo_experiments.errors import RunDirError
from elmo_experiments.faults import fault_point
from elmo_experiments.metrics.metric import DatasetMetric
from elmo_experiments.training.callbacks import Callback, JsonlLog, TensorBoardLog
from elmo_experiments.training.distributed import (
    SINGLE,
    World,
    place_on_device,
    stop_on_lost_rank,
    world_from_env,
)
from elmo_experiments.training.run_dir import (
    check_run_dir,
    describe,
    load_checkpoint,
    prepare_run_dir,
    start_or_recover,
    verify_checkpoint,
    write_json,
)
from elmo_experiments.training.run_identity import identity, read_record, record_end, record_start
from elmo_experiments.training.run_lock import run_dir_lock
from elmo_experiments.training.trainer import (
    Loader,
    Trainer,
    build_scheduler,
    check_validation_metric,
)
from elmo_experiments.version import code_version

logger = logging.getLogger("elmo_experiments")


def seed_everything(values: dict[str, Any]) -> int:
    seed = values["random_seed"]
    random.seed(seed)
    np.random.seed(values["numpy_seed"] if values["numpy_seed"] is not None else seed)
    torch.manual_seed(values["pytorch_seed"] if values["pytorch_seed"] is not None else seed)
    return seed


class RunLog(logging.FileHandler):
    """``out.log``: a write that fails (a full disk) is one warning on stderr, naming the
    file, not logging's traceback for every message; it keeps trying, so the log goes on once
    there is room."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:
        if not self.failed:
            self.failed = True
            sys.stderr.write(f"warning: {self.baseFilename}: cannot write it "
                             f"({sys.exc_info()[1]}); messages go to the console meanwhile\n")

    def close(self) -> None:
        try:
            super().close()
        except OSError:  # the last buffered lines on a full disk: already warned about
            self.stream = None  # type: ignore[assignment]


def _thread_error(args: threading.ExceptHookArgs) -> None:
    """A background writer's failed write (TensorBoard's event thread on a full disk) in one
    line; the writer's owner names the file when it next writes. Other errors as Python
    shows them."""
    if isinstance(args.exc_value, OSError):
        sys.stderr.write(f"warning: background writer {args.thread.name if args.thread else ''} "
                         f"stopped: {args.exc_value}\n")
    else:
        threading.__excepthook__(args)


def setup_logging(run_dir: Path | None, world: World = SINGLE) -> None:
    """Messages on stderr, and into ``RUN_DIR/out.log``; ranks other than 0 show warnings
    only, marked with their rank, and write no file."""
    threading.excepthook = _thread_error
    logger.setLevel(logging.INFO if world.main else logging.WARNING)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    console = logging.StreamHandler(sys.stderr)
    prefix = f"[rank {world.rank}] " if world.distributed else ""
    console.setFormatter(logging.Formatter(prefix + "%(message)s"))
    logger.addHandler(console)
    if run_dir is not None and world.main:
        file_handler = RunLog(run_dir / "out.log", encoding="utf-8")
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(file_handler)


@dataclass
class Setup:
    """What training needs besides the data, built before the run directory is touched: the
    model on its device, its optimizer and scheduler, and the callbacks."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: Any
    callbacks: list[Callback]
    dataset_metric: DatasetMetric | None


def set_up(model: torch.nn.Module, settings: dict[str, Any],
           dataset_metric: DatasetMetric | None = None,
           extra_callbacks: list[Callback] | None = None, world: World = SINGLE) -> Setup:
    """Everything that can still fail on the config (the device, optimizer and scheduler
    values, the validation metric's name), tried before a ``--force`` wipes anything.
    Callbacks (they write files) run on rank 0 only."""
    device = place_on_device(trainer_device(settings), world)
    if device.type == "cpu":
        tune_cpu_runtime()  # denormals flushed, freed memory reused (cpu_runtime.py)
    model.to(device)
    optimizer = settings["optimizer"].build(
        parameters=[p for p in model.parameters() if p.requires_grad])
    scheduler = build_scheduler(settings["learning_rate_scheduler"], optimizer,
                                settings["validation_metric"])
    check_validation_metric(model, dataset_metric, settings["validation_metric"])
    callbacks: list[Callback] = [JsonlLog(),
                                 *([TensorBoardLog()] if settings.get("tensorboard", True) else []),
                                 *[spec.build() for spec in settings["callbacks"]],
                                 *(extra_callbacks or [])] if world.main else []
    return Setup(model, optimizer, scheduler, callbacks, dataset_metric)


def open_run(run_dir: Path, force: bool, recover: bool, config: dict[str, Any], source: str,
             what: dict[str, Any], write_first: Callable[[], None], world: World = SINGLE,
             keep: tuple[str, ...] = ()) -> bool:
    """Clear or create the run directory (``--force``/``--recover``; ``keep``: entries staged
    in it for this start), call ``write_first`` (the vocabulary), then write ``config.json``
    (from now on the run exists) and ``run.json``, and log into ``out.log``. Returns whether
    the run resumes. Rank 0 does it, while the other ranks wait; the caller holds the run
    directory's lock (``run_lock``)."""
    if not world.main:
        world.barrier()
        setup_logging(run_dir, world)
        return bool(world.broadcast(None))
    recover = _open_run(run_dir, force, recover, config, source, what, write_first, world.size,
                        keep)
    world.barrier()
    setup_logging(run_dir, world)
    return bool(world.broadcast(recover))


def _open_run(run_dir: Path, force: bool, recover: bool, config: dict[str, Any], source: str,
              what: dict[str, Any], write_first: Callable[[], None], processes: int,
              keep: tuple[str, ...]) -> bool:
    record = None
    if recover and (run_dir / "config.json").is_file():
        record = read_record(run_dir)  # a damaged run.json or checkpoint stops the
        for name in ("last.pt", "best.pt"):  # resumption before anything changes
            if (run_dir / name).is_file():
                load_checkpoint(run_dir / name, mmap=True)
    recover = prepare_run_dir(run_dir, force=force, recover=recover, keep=keep)
    write_first()
    fault_point("run:vocabulary_saved")
    start_or_recover(run_dir, config, recover, source)
    if recover and record:
        warn_if_world_changed(run_dir, record, processes)
    record_start(run_dir, what, processes)
    return recover


def warn_if_world_changed(run_dir: Path, record: dict[str, Any], processes: int) -> None:
    """One warning line when a run resumes with another number of processes than its last
    session had: batch sizes are per process, so the global batch changes with them."""
    sessions = [s for s in record.get("sessions", []) if isinstance(s, dict)]
    before = sessions[-1].get("processes", 1) if sessions else 1
    if not isinstance(before, int) or before == processes or before < 1:
        return
    change = {before / 2: "halves", before * 2: "doubles"}.get(
        processes, f"becomes {processes}/{before} of what it was")
    logger.warning("%s: trained by %d process%s, resumed by %d: data_loader batch sizes are "
                   "per process, so the global batch %s (resume with torchrun "
                   "--nproc-per-node=%d to keep it)", run_dir, before,
                   "" if before == 1 else "es", processes, change, before)


def fit(setup: Setup, train_loader: Loader, validation_loader: Loader | None,
        settings: dict[str, Any], run_dir: Path, config: dict[str, Any], recover: bool,
        description: dict[str, Any], world: World = SINGLE) -> tuple[Trainer, dict[str, Any]]:
    """Train to the end (or early stop); the model holds the best epoch's weights afterwards.

    Returns the trainer (its ``state`` has epochs and timings) and the best epoch's record.
    Ranks other than 0 draw their own random numbers (dropout) from the seed plus their rank.
    """
    model, callbacks = setup.model, setup.callbacks
    if world.rank:
        torch.manual_seed(torch.initial_seed() + world.rank)
    trainer = Trainer(model, setup.optimizer, setup.scheduler, train_loader, validation_loader,
                      settings, run_dir, callbacks, description, setup.dataset_metric, world)
    if recover:
        trainer.restore()
    for callback in callbacks:
        callback.on_start(run_dir, config)
    logger.info("training %d parameters, %d batches an epoch (code %s)",
                sum(p.numel() for p in model.parameters() if p.requires_grad), len(train_loader),
                code_version())
    best = trainer.train()
    world.barrier()  # rank 0 has written best.pt
    if trainer.state.best_epoch is not None:
        path = run_dir / "best.pt"
        if not path.is_file():
            raise RunDirError(f"{path}: missing, though epoch {trainer.state.best_epoch} was the "
                              f"best; its weights are gone, so the run cannot report them "
                              f"(train afresh with --force)")
        checkpoint = load_checkpoint(path)
        verify_checkpoint(checkpoint, path, "best", model, description)
        if checkpoint.get("epoch", trainer.state.best_epoch) != trainer.state.best_epoch:
            raise RunDirError(f"{path}: holds epoch {checkpoint['epoch']}, but the run's best "
                              f"is epoch {trainer.state.best_epoch}")
        model.load_state_dict(checkpoint["model"])
    return trainer, best


def summary(trainer: Trainer, best: dict[str, Any]) -> dict[str, Any]:
    """The common head of ``metrics.json``: epochs, timings, the best epoch's metrics."""
    state = trainer.state
    metrics: dict[str, Any] = {
        "best_epoch": state.best_epoch,
        "epochs_completed": state.epoch,
        "training_duration_s": state.elapsed,
        "epoch_durations_s": [r["duration_s"] for r in state.history],
        "code": code_version(),  # the code that finished the run (each start is in out.log)
    }
    metrics.update({key: value for key, value in best.items()  # what callbacks added (e.g.
                    if key not in ("epoch", "duration_s", "lr")  # the learned mixes)
                    and not key.startswith(("training_", "validation_"))})
    for key, value in best.items():
        if key.startswith("validation_"):
            metrics[f"best_{key}"] = value
        elif key.startswith("training_"):
            metrics[key] = value
    return metrics


def finish(trainer: Trainer, run_dir: Path, metrics: dict[str, Any]) -> dict[str, Any]:
    """Write ``metrics.json``, close ``run.json`` and tell the callbacks the run is over
    (rank 0; the other ranks wait until rank 0 is here, past any export of its own, and only
    return the metrics: no rank's exit cuts a collective short)."""
    trainer.world.barrier()
    if not trainer.world.main:
        return metrics
    write_json(run_dir / "metrics.json", metrics)
    record_end(run_dir)
    for callback in trainer.callbacks:
        callback.on_end(metrics)
    return metrics


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
class Validated:
    """A config as a session needs it once validated: the config to run (``config.json``),
    the seeds, the trainer settings, what ``run.json`` records beyond the config's identity
    (a continued model's source) and the validated form its assembly is built from."""

    config: dict[str, Any]
    seeds: dict[str, Any]
    trainer: dict[str, Any]
    parsed: Any
    what: dict[str, Any] = field(default_factory=dict)


def read_request(config_path: str | Path, serialization_dir: str | Path,
                 ext_vars: dict[str, str] | None, overrides: list[str] | None, force: bool,
                 recover: bool, validate: Callable[[dict[str, Any]], Validated]
                 ) -> tuple[SessionRequest, Validated]:
    """A ``train`` or ``pretrain`` start's request: the config file read with its ext vars
    and overrides (the files it read go into ``run.json``), its paths made absolute, then
    ``validate``d."""
    reads: dict[str, str] = {}
    config = absolute_paths(load_config(config_path, ext_vars, overrides, reads))
    valid = validate(config)
    what = {**identity(config_path, overrides, ext_vars, reads, valid.config), **valid.what}
    request = SessionRequest(Path(serialization_dir), valid.config, str(config_path), what,
                             valid.seeds, valid.trainer, force, recover, world_from_env())
    return request, valid


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
