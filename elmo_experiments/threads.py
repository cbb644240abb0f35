"""How many compute threads a process should use: the CPUs it may really run on.

``os.cpu_count()`` counts the machine's CPUs, not this process's share of them. On a shared
machine or in a container the process may be pinned to fewer (CPU affinity) or given a CPU
quota (a cgroup's ``cpu.max``); threads beyond that share wait for each other, and PyTorch's
default (every CPU) can then be several times slower than one thread. ``available_cpus`` takes
the smallest of the three; every command's ``--threads N`` overrides it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import torch

CGROUP_ROOT = Path("/sys/fs/cgroup")


def affinity_cpus() -> int:
    """The CPUs this process may be scheduled on (its affinity mask), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def quota_cpus(root: Path = CGROUP_ROOT, membership: str | None = None) -> float | None:
    """The CPU quota of this process's cgroup in CPUs, the tightest along its path up to the
    root (cgroup v2 ``cpu.max``; v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``); None when
    there is none or it cannot be read. ``membership``: the text of ``/proc/self/cgroup``."""
    if membership is None:
        try:
            membership = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    quotas: list[float] = []
    for line in membership.splitlines():
        _, controllers, path = ([*line.split(":", 2), "", ""])[:3]
        if controllers == "":  # v2: the unified tree
            quotas += _along(root, path, _v2_quota)
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's own tree, mounted
            for tree in dict.fromkeys((controllers, "cpu")):  # as named, or as its alias
                quotas += _along(root / tree, path, _v1_quota)
    return min(quotas) if quotas else None


def _along(tree: Path, path: str, quota_of) -> list[float]:  # type: ignore[no-untyped-def]
    """The quotas set on ``path`` and each of its ancestors in ``tree``."""
    found, folder = [], tree / path.strip("/")
    while True:
        quota = quota_of(folder)
        if quota is not None:
            found.append(quota)
        if folder == tree or tree not in folder.parents:
            return found
        folder = folder.parent


def _v2_quota(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_quota(folder: Path) -> float | None:
    try:
        quota_us = int((folder / "cpu.cfs_quota_us").read_text())
        period_us = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def available_cpus(root: Path = CGROUP_ROOT) -> int:
    """The CPUs this process may really use: its affinity, capped by its cgroup's quota
    (rounded up: a quota of 1.5 CPUs gives 2 threads), at least 1."""
    cpus = affinity_cpus()
    quota = quota_cpus(root)
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(1, cpus)


def set_threads(threads: int | None = None) -> int:
    """Set torch's compute threads to ``threads`` (default: ``available_cpus()``); returns it.
    ``OMP_NUM_THREADS`` in the environment is respected when ``threads`` is not given."""
    if threads is None:
        from_env = os.environ.get("OMP_NUM_THREADS", "").strip()
        threads = int(from_env) if from_env.isdecimal() and int(from_env) > 0 else \
            available_cpus()
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads
