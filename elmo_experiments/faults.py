"""Named moments where the fault-injection tests interrupt a run: ``ELMO_FAULT_AT=NAME`` sends
the process a signal (``ELMO_FAULT_SIGNAL``, default SIGKILL: as abrupt as a power cut) when it
reaches ``fault_point(NAME)`` (with ``ELMO_FAULT_RANK=N``, only the process of that
``torchrun`` rank). Unset (always, outside those tests), a fault point is one environment
lookup."""

from __future__ import annotations

import os
import signal

FAULT_VARIABLE = "ELMO_FAULT_AT"
SIGNAL_VARIABLE = "ELMO_FAULT_SIGNAL"
RANK_VARIABLE = "ELMO_FAULT_RANK"


def fault_point(name: str) -> None:
    """Signal this process here if the tests asked for ``name``."""
    if os.environ.get(FAULT_VARIABLE) == name and os.environ.get(
            RANK_VARIABLE, os.environ.get("RANK", "0")) == os.environ.get("RANK", "0"):
        os.kill(os.getpid(), signal.Signals[os.environ.get(SIGNAL_VARIABLE, "SIGKILL")])
