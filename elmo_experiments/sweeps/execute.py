"""Running a sweep's cells through submitit: its local executor (N worker processes on this
machine) or its Slurm executor (one array task per cell), and resuming a sweep."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import atomic_write_text
from elmo_experiments.errors import ConfigError, TrainingStopped
from elmo_experiments.sweeps.spec import Cell, Sweep

logger = logging.getLogger("elmo_experiments")
FAILED_FILE = "FAILED.json"


def cell_dir(root: Path, cell: Cell) -> Path:
    return root / cell.name


def finished(run_dir: Path) -> bool:
    return (run_dir / "metrics.json").is_file()


def run_cell(cell: Cell, run_dir: Path, threads: int | None = None) -> dict[str, Any]:
    """Train one cell; a finished run is skipped, an interrupted one recovered, a failure
    retried once (recovering what the first try left) and then recorded in FAILED.json."""
    import torch

    from elmo_experiments.cpu_runtime import tune_cpu_runtime
    from elmo_experiments.run import train

    if threads:
        torch.set_num_threads(threads)
    tune_cpu_runtime()  # before the first parallel operation: every thread inherits it
    if finished(run_dir):
        return {"cell": cell.name, "status": "skipped"}
    problem = ""
    for attempt in (1, 2):
        recover = (run_dir / "config.json").is_file()
        try:
            train(cell.config, run_dir, dict(cell.ext_vars), list(cell.overrides),
                  recover=recover)
        except TrainingStopped as error:
            if error.exit_code > 128:  # stopped by SIGINT/SIGTERM: resumable, not a failure
                return {"cell": cell.name, "status": "interrupted", "signal": True,
                        "error": str(error).splitlines()[0]}
            problem = f"{type(error).__name__}: {error}".splitlines()[0]
            logger.warning("%s: attempt %d failed: %s", cell.name, attempt, problem)
            continue
        except Exception as error:  # any failure of a cell is reported, not fatal to the sweep
            problem = f"{type(error).__name__}: {error}".splitlines()[0]
            logger.warning("%s: attempt %d failed: %s", cell.name, attempt, problem)
            continue
        (run_dir / FAILED_FILE).unlink(missing_ok=True)
        return {"cell": cell.name, "status": "recovered" if recover else "trained",
                "attempts": attempt}
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / FAILED_FILE, json.dumps({"error": problem, "time": time.time()}))
    return {"cell": cell.name, "status": "failed", "error": problem, "attempts": 2}


def run_cells(work: list[tuple[Cell, Path]], threads: int | None) -> list[dict[str, Any]]:
    """One worker's share, cell after cell; a cell stopped by a signal ends the share."""
    statuses = []
    for cell, run_dir in work:
        statuses.append(run_cell(cell, run_dir, threads))
        if statuses[-1].get("signal"):
            break
    return statuses


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
              slurm: dict[str, Any] | None = None,
              threads: int | None = None) -> list[dict[str, Any]]:
    """Run every unfinished cell (twice at most: a job that died is resumed once); returns
    one status per cell. ``threads``: torch threads per worker (local default: the CPUs
    shared out between the workers)."""
    root.mkdir(parents=True, exist_ok=True)
    workers = workers or sweep.workers
    if threads is None and cluster == "local":
        threads = max(1, (os.cpu_count() or 1) // workers)
    statuses: dict[str, dict[str, Any]] = {}
    for _ in range(2):
        pending = [(c, cell_dir(root, c)) for c in sweep.cells
                   if not finished(cell_dir(root, c)) and statuses.get(c.name, {}).get(
                       "status") != "failed"]
        if not pending:
            break
        executor = executor_for(root, cluster, dict(slurm or {}))
        if cluster == "slurm":
            executor.update_parameters(slurm_array_parallelism=workers)
            jobs = executor.map_array(run_cell, [c for c, _ in pending], [d for _, d in pending])
            shares = [[item] for item in pending]
        else:
            shares = [pending[i::workers] for i in range(workers) if pending[i::workers]]
            jobs = [executor.submit(run_cells, share, threads) for share in shares]
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
        if finished(cell_dir(root, cell)) and cell.name not in statuses:
            statuses[cell.name] = {"cell": cell.name, "status": "skipped"}
        elif finished(cell_dir(root, cell)) and statuses[cell.name]["status"] == "interrupted":
            statuses[cell.name] = {"cell": cell.name, "status": "trained"}
    return [statuses.get(c.name, {"cell": c.name, "status": "interrupted"}) for c in sweep.cells]
