"""``elmo-exp sweep``: what the command does with its options (``cli.py`` only parses them).

``sweep`` runs the spec's unfinished cells (or prints their commands), then summarises every
cell of the spec; it returns the exit status (1 when a cell failed or changed).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from elmo_experiments.data.files import read_json
from elmo_experiments.sweeps.execute import (
    PROBLEMS,
    cell_dir,
    cell_state,
    changed_problem,
    finished,
    run_sweep,
)
from elmo_experiments.sweeps.spec import Cell, load_sweep
from elmo_experiments.sweeps.summary import check_previous, previous_runs, render, summarize


@dataclass(frozen=True)
class SweepOptions:
    """The command's options, as ``elmo-exp sweep --help`` describes them."""

    sweep_dir: str | None = None
    cluster: str = "local"
    workers: int | None = None
    slurm_settings: tuple[str, ...] = ()
    print_commands: bool = False
    summary_only: bool = False
    only: tuple[str, ...] = ()
    seeds: tuple[int, ...] = ()
    fractions: tuple[float, ...] = ()
    threads: int | None = None
    previous: str | None = None
    activation_cache: str | None = None
    force: bool = False
    setup: Callable[[], None] | None = None  # each worker process calls it first (the registry)


def slurm_parameters(pairs: Sequence[str]) -> dict[str, int | str]:
    """``key=value`` pairs as submitit's Slurm parameters (digits as integers)."""
    slurm: dict[str, int | str] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        slurm[key] = int(value) if value.isdigit() else value
    return slurm


def sweep(spec: str, options: SweepOptions, arguments: Sequence[str],
          out: Callable[[str], None], err: Callable[[str], None]) -> int:
    """Run (or print) the grid ``spec``'s cells and summarise them; ``arguments``: the
    command's own arguments, recorded in the summary (without ``--summary-only``); ``out``
    takes text for standard output (newlines included), ``err`` lines for standard error.
    Returns the exit status."""
    whole = load_sweep(spec)
    root = Path(options.sweep_dir or Path("runs") / "sweeps" / whole.name)
    earlier: dict[str, dict] = {}
    if options.previous:
        summary = read_json(options.previous)
        check_previous(summary, whole, options.previous)
        earlier = previous_runs(summary)
    prefix = ""  # of each printed command
    if options.activation_cache:  # the workers inherit the environment (local and Slurm)
        from elmo_experiments.modules.embedders.activation_cache import ACTIVATION_CACHE_ENV

        folder = str(Path(options.activation_cache).resolve())
        os.environ[ACTIVATION_CACHE_ENV] = folder
        prefix = f"{ACTIVATION_CACHE_ENV}={shlex.quote(folder)} "
    grid = whole.only(list(options.only), list(options.seeds), list(options.fractions))
    grid = replace(grid, cells=[c for c in grid.cells if c.name not in earlier
                                or finished(c, cell_dir(root, c))])
    if options.print_commands:
        for cell in grid.own().cells:
            state = cell_state(cell, cell_dir(root, cell))
            if state == "changed" and not options.force:
                err(f"# {changed_problem(cell, cell_dir(root, cell))}")
            elif state != "finished":
                out(prefix + cell.command(cell_dir(root, cell), state == "changed") + "\n")
        return 0
    own = replace(grid.own(), cells=[]) if options.summary_only else grid.own()
    ran = dict(zip([c.name for c in own.cells],
                   run_sweep(own, root, options.cluster, options.workers,
                             slurm_parameters(options.slurm_settings), options.threads,
                             options.force, options.setup)
                   if own.cells else [], strict=True))

    # the summary covers every cell of the spec: those left out this time keep their results,
    # and those another sweep runs point there
    def left_out(cell: Cell) -> dict[str, str]:
        run_dir = cell_dir(root, cell)
        state = cell_state(cell, run_dir)
        if cell.same_as:
            status = "shared"
        elif state == "finished":
            status = "skipped"
        elif cell.name in earlier:
            status = "previous"
        elif state == "changed":
            return {"cell": cell.name, "status": "changed",
                    "error": changed_problem(cell, run_dir)}
        else:
            status = "unfinished" if state == "started" else "not run"
        return {"cell": cell.name, "status": status}

    statuses = [ran.get(c.name) or left_out(c) for c in whole.cells]
    command = ["elmo-exp", "sweep", *(a for a in arguments if a != "--summary-only")]
    summary = summarize(whole, root, statuses, " ".join(command), earlier)
    out(render(summary))
    err(f"summary: {root / 'summary.json'}")
    return 1 if any(c["status"] in PROBLEMS for c in summary["cells"]) else 0
