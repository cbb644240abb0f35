"""The command line run inside the test process: ``elmo_experiments.cli.main`` with its own
arguments and captured output, as a ``CompletedProcess``. For commands whose behaviour is all
in ``main`` (a scorer's figures and its one-line errors): a process of its own costs ~2.5 s of
imports and proves nothing more (``tests/test_cli.py`` runs the real process)."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

from elmo_experiments.cli import main


def elmo_exp(*args: str) -> subprocess.CompletedProcess[str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    argv, sys.argv = sys.argv, ["elmo-exp", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        sys.argv = argv
    return subprocess.CompletedProcess(["elmo-exp", *args], code, stdout.getvalue(),
                                       stderr.getvalue())
