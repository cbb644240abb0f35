"""Running a sweep's cells through submitit: its local executor (N worker processes on this
machine) or its Slurm executor (one array task per cell), and resuming a sweep.

A cell is finished when its run directory holds ``metrics.json`` and ``model.tar.gz`` and its
``config.json`` is the config the spec gives the cell now (``cell_state``); a cell whose
config changed is left alone unless the sweep runs with ``--force``. Each cell holds its run
directory's lock while it runs (``run_lock``). Jobs are checkpointable (``CellJob``): stopped
by Slurm's time limit or a preemption, a job is requeued and resumes its cells with
``--recover``."""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elmo_experiments.errors import ConfigError, ElmoError, RunDirLocked, TrainingStopped
from elmo_experiments.sweeps.spec import Cell, Sweep
from elmo_experiments.threads import available_cpus
from elmo_experiments.training.run_dir import (
    FAILED_FILE,
    config_differences,
    full_digest,
    read_config,
    write_json,
)
from elmo_experiments.training.run_lock import run_dir_lock

logger = logging.getLogger("elmo_experiments")
# cell statuses that a second round does not retry, and that make the sweep exit with 1
NOT_RETRIED = ("failed", "changed", "busy")
PROBLEMS = ("failed", "interrupted", "changed", "busy")


def cell_dir(root: Path, cell: Cell) -> Path:
    return root / cell.name


def cell_config(cell: Cell) -> dict[str, Any]:
    """The config ``elmo-exp train`` would write into the cell's ``config.json``. Not cached:
    it depends on the environment (``ELMO_DATA_DIR`` picks the data or the samples)."""
    from elmo_experiments.config.loader import load_config
    from elmo_experiments.config.paths import absolute_paths

    return absolute_paths(load_config(cell.config, dict(cell.ext_vars), list(cell.overrides)))


def cell_state(cell: Cell, run_dir: Path) -> str:
    """``new`` (no ``config.json``), ``changed`` (its config is not the one the spec gives
    the cell now), ``finished`` (``metrics.json`` and ``model.tar.gz`` written) or
    ``started`` (to resume). A config that cannot be read is left to training to report."""
    if not (run_dir / "config.json").is_file():
        return "new"
    try:
        if full_digest(read_config(run_dir)) != full_digest(cell_config(cell)):
            return "changed"
    except ElmoError:
        return "started"
    if (run_dir / "metrics.json").is_file() and (run_dir / "model.tar.gz").is_file():
        return "finished"
    return "started"


def finished(cell: Cell, run_dir: Path) -> bool:
    return cell_state(cell, run_dir) == "finished"


def changed_problem(cell: Cell, run_dir: Path) -> str:
    """The one-line report of a cell whose run directory holds another config."""
    differences = config_differences(read_config(run_dir), cell_config(cell))
    shown = ", ".join(differences[:3]) + (", ..." if len(differences) > 3 else "")
    return (f"{run_dir}: its config.json differs from the spec's at {shown}; rerun the sweep "
            f"with --force to train the cell afresh, or give it a new sweep folder")


def run_cell(cell: Cell, run_dir: Path, threads: int | None = None, force: bool = False
             ) -> dict[str, Any]:
    """Train one cell, holding its run directory's lock: a finished run is skipped, a changed
    one refused (``force``: trained afresh), an interrupted one recovered, a failure retried
    once (recovering what the first try left) and then recorded in FAILED.json (which the
    next try removes). A directory another process holds is ``busy``."""
    import torch

    from elmo_experiments.cpu_runtime import tune_cpu_runtime

    if threads:
        torch.set_num_threads(threads)
    tune_cpu_runtime()  # before the first parallel operation: every thread inherits it
    try:
        with run_dir_lock(run_dir):
            return _run_locked(cell, run_dir, force)
    except RunDirLocked as error:
        return {"cell": cell.name, "status": "busy", "error": str(error)}


def _run_locked(cell: Cell, run_dir: Path, force: bool) -> dict[str, Any]:
    from elmo_experiments.run import train

    (run_dir / FAILED_FILE).unlink(missing_ok=True)  # an earlier failure: this is a new try
    state = cell_state(cell, run_dir)
    if state == "finished":
        return {"cell": cell.name, "status": "skipped"}
    if state == "changed" and not force:
        return {"cell": cell.name, "status": "changed", "error": changed_problem(cell, run_dir)}
    problem = ""
    for attempt in (1, 2):
        afresh = cell_state(cell, run_dir) == "changed"  # until the new config is written
        recover = not afresh and (run_dir / "config.json").is_file()
        try:
            train(cell.config, run_dir, dict(cell.ext_vars), list(cell.overrides),
                  recover=recover, force=afresh)
        except TrainingStopped as error:
            if error.exit_code > 128:  # stopped by a signal: resumable, not a failure
                return {"cell": cell.name, "status": "interrupted",
                        "signal": error.exit_code - 128, "error": str(error).splitlines()[0]}
            problem = f"{type(error).__name__}: {error}".splitlines()[0]
            logger.warning("%s: attempt %d failed: %s", cell.name, attempt, problem)
            continue
        except Exception as error:  # any failure of a cell is reported, not fatal to the sweep
            problem = f"{type(error).__name__}: {error}".splitlines()[0]
            logger.warning("%s: attempt %d failed: %s", cell.name, attempt, problem)
            continue
        return {"cell": cell.name, "status": "recovered" if recover else "trained",
                "attempts": attempt}
    write_json(run_dir / FAILED_FILE, {"error": problem, "time": time.time()})
    return {"cell": cell.name, "status": "failed", "error": problem, "attempts": 2}


def run_cells(work: list[tuple[Cell, Path]], threads: int | None, force: bool = False
              ) -> list[dict[str, Any]]:
    """One worker's share, cell after cell; a cell stopped by a signal ends the share."""
    statuses = []
    for cell, run_dir in work:
        statuses.append(run_cell(cell, run_dir, threads, force))
        if statuses[-1].get("signal"):
            break
    return statuses


def _hands_over(signum: int) -> bool:
    """Whether a cell stopped by ``signum`` is a job for submitit to requeue: in a submitit
    job, the preemption signal, or on Slurm the SIGTERM that precedes a preemption."""
    from elmo_experiments.training.trainer import preemption_signal

    executor = os.environ.get("SUBMITIT_EXECUTOR")
    return bool(executor) and (signum == preemption_signal()
                               or (signum == signal.SIGTERM and executor == "slurm"))


class CellJob:
    """``run_cell`` or ``run_cells`` as a submitit job that a cluster may stop.

    submitit calls ``checkpoint`` when the job gets the preemption signal (Slurm's time limit
    or a preemption): it resubmits the same call, and the requeued job resumes each unfinished
    cell with ``--recover``. A signal that arrives while a cell trains stops it after the
    current batch, with ``last.pt`` at that point; then the job hands the signal on to
    submitit, which requeues it."""

    def __init__(self, function: Any, setup: Callable[[], None] | None = None) -> None:
        self.function = function
        self.setup = setup  # run first in the job's process (e.g. fill the registry)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.setup is not None:
            self.setup()
        result = self.function(*args, **kwargs)
        statuses = result if isinstance(result, list) else [result]
        stopped = [s["signal"] for s in statuses if s.get("signal")]
        if stopped and _hands_over(stopped[-1]):
            from elmo_experiments.training.trainer import preemption_signal

            wanted = preemption_signal()
            if callable(signal.getsignal(wanted)):  # submitit's handler: checkpoint, requeue
                logger.warning("%s: stopped for the cluster; asking submitit to requeue the "
                               "job", statuses[-1]["cell"])
                signal.raise_signal(wanted)
        return result

    def checkpoint(self, *args: Any, **kwargs: Any) -> Any:
        """submitit's checkpointing hook: the same call again (it resumes what was done)."""
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self, *args, **kwargs)


def executor_for(root: Path, cluster: str, slurm: dict[str, Any]) -> Any:
    """A submitit executor: ``local`` (processes here) or ``slurm``."""
    try:
        import submitit
    except ImportError:
        raise ConfigError(["sweep: needs submitit (pip install 'elmo-experiments[sweep]')"],
                          source="sweep") from None
    if cluster not in ("local", "slurm"):
        raise ConfigError([f"--cluster: {cluster!r} is not local or slurm"], source="sweep")
    executor = submitit.AutoExecutor(folder=root / "submitit", cluster=cluster)
    executor.update_parameters(timeout_min=int(slurm.pop("timeout_min", 24 * 60)), **slurm)
    return executor


def run_sweep(sweep: Sweep, root: Path, cluster: str = "local", workers: int | None = None,
              slurm: dict[str, Any] | None = None, threads: int | None = None,
              force: bool = False, setup: Callable[[], None] | None = None
              ) -> list[dict[str, Any]]:
    """Run every unfinished cell (twice at most: a job that died is resumed once); returns
    one status per cell. ``setup`` runs first in each job's process (the CLI's: fill the
    registry). ``threads``: torch threads per worker (local default: the CPUs this
    process may use, shared out between the workers). A cell whose config changed is
    ``changed`` and not run unless ``force`` (then trained afresh)."""
    root.mkdir(parents=True, exist_ok=True)
    workers = workers or sweep.workers
    if threads is None and cluster == "local":
        threads = max(1, available_cpus() // workers)
    statuses: dict[str, dict[str, Any]] = {}
    for cell in sweep.cells:
        if not force and cell_state(cell, cell_dir(root, cell)) == "changed":
            statuses[cell.name] = {"cell": cell.name, "status": "changed",
                                   "error": changed_problem(cell, cell_dir(root, cell))}
    for _ in range(2):
        pending = [(c, cell_dir(root, c)) for c in sweep.cells
                   if not finished(c, cell_dir(root, c)) and statuses.get(c.name, {}).get(
                       "status") not in NOT_RETRIED]
        if not pending:
            break
        executor = executor_for(root, cluster, dict(slurm or {}))
        if cluster == "slurm":
            executor.update_parameters(slurm_array_parallelism=workers)
            jobs = executor.map_array(CellJob(run_cell, setup), [c for c, _ in pending],
                                      [d for _, d in pending], [None] * len(pending),
                                      [force] * len(pending))
            shares = [[item] for item in pending]
        else:
            shares = [pending[i::workers] for i in range(workers) if pending[i::workers]]
            jobs = [executor.submit(CellJob(run_cells, setup), share, threads, force)
                    for share in shares]
        for job, share in zip(jobs, shares, strict=True):
            try:
                result = job.result()
                for status in result if isinstance(result, list) else [result]:
                    statuses[status["cell"]] = status
            except Exception as error:  # the worker process died (killed, out of memory)
                for cell, _ in share:
                    statuses.setdefault(cell.name, {"cell": cell.name, "status": "interrupted",
                                                    "error": str(error).splitlines()[-1]})
        if any(status.get("signal") for status in statuses.values()):
            break  # stopped on purpose: the same command resumes it; no second round
    for cell in sweep.cells:  # finished before this sweep started, or before its worker died
        if finished(cell, cell_dir(root, cell)) and cell.name not in statuses:
            statuses[cell.name] = {"cell": cell.name, "status": "skipped"}
        elif finished(cell, cell_dir(root, cell)) and \
                statuses[cell.name]["status"] == "interrupted":
            statuses[cell.name] = {"cell": cell.name, "status": "trained"}
    return [statuses.get(c.name, {"cell": c.name, "status": "interrupted"}) for c in sweep.cells]
