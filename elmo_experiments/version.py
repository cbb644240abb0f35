"""Which code produced a result: the git commit of the checkout (``-dirty`` with uncommitted
changes), or the package version when installed without git."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

__version__ = "0.1.0"  # as pyproject.toml says
_ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def code_version() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=_ROOT, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=_ROOT, capture_output=True, text=True, timeout=10,
                                check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"elmo-experiments {__version__}"
    return commit + ("-dirty" if status else "")
