"""Named moments where the fault-injection tests kill a run: ``ELMO_FAULT_AT=NAME`` sends the
process SIGKILL when it reaches ``fault_point(NAME)``. Unset (always, outside those tests), a
fault point is one environment lookup."""

from __future__ import annotations

import os
import signal

FAULT_VARIABLE = "ELMO_FAULT_AT"


def fault_point(name: str) -> None:
    """Die here, as abruptly as a power cut, if the tests asked for ``name``."""
    if os.environ.get(FAULT_VARIABLE) == name:
        os.kill(os.getpid(), signal.SIGKILL)
