"""Data-parallel training across processes: torch.distributed, launched by ``torchrun``.

Every rank builds the same global batches (same seed) and takes its share of each,
so all ranks run the same number of steps, and the gradients that DistributedDataParallel
averages equal those of one process fed the whole global batch (each rank's loss is weighted
by its share: exact for losses that are means over instances). Metric states, losses and
predictions are summed or gathered across ranks; rank 0 alone writes the run directory.

One process (no ``torchrun``) is the ``World`` of size 1, and every call here is then a no-op.

A rank that ends mid-run (killed, or stopped on an error of its own) breaks the next collective
on the others; ``stop_on_lost_rank`` turns that into one line naming the rank and how to resume,
instead of gloo's tracebacks.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from elmo_experiments.data.batching import Batch
from elmo_experiments.errors import ConfigError, DataError, TrainingStopped
from elmo_experiments.metrics.metric import Metric, add_states

logger = logging.getLogger("elmo_experiments")


@dataclass(frozen=True)
class World:
    """This process's place among the ranks of a run."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0  # the rank on this node: which GPU it drives

    @property
    def main(self) -> bool:
        """Rank 0: the one that writes the run directory, logs and shows progress."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def sum(self, values: list[float]) -> list[float]:
        """Each value summed over the ranks (float64, so counts stay exact)."""
        if not self.distributed:
            return list(values)
        tensor = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(tensor)
        return tensor.tolist()

    def gather(self, value: Any) -> list[Any]:
        """Every rank's ``value`` (picklable), in rank order, on every rank."""
        if not self.distributed:
            return [value]
        out: list[Any] = [None] * self.size
        dist.all_gather_object(out, value)
        return out

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value`` on every rank."""
        if not self.distributed:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


SINGLE = World()


def world_from_env() -> World:
    """The world ``torchrun`` describes (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``), joined on
    first use: gloo for CPU tensors, NCCL for CUDA ones when there is a GPU. Without
    ``torchrun``: one process."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return SINGLE
    try:
        world = World(int(os.environ["RANK"]), size, int(os.environ.get("LOCAL_RANK", "0")))
    except (KeyError, ValueError):
        raise ConfigError([f"WORLD_SIZE={size} but RANK is missing or not a number: launch "
                           f"multi-process runs with torchrun"]) from None
    if not dist.is_initialized():
        backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend)
        atexit.register(_leave)
        _processes[:] = world.gather((socket.gethostname(), os.getpid()))
    return world


_processes: list[tuple[str, int]] = []  # every rank's (host, process id), in rank order
# what a collective says when the process at the other end is gone
_PEER_GONE = ("Connection closed by peer", "Connection reset by peer", "Broken pipe", "gloo",
              "NCCL")


def lost_peer(error: BaseException) -> bool:
    """Whether ``error`` is a collective that failed because another rank is gone."""
    return isinstance(error, dist.DistError) or (
        isinstance(error, RuntimeError) and any(mark in str(error) for mark in _PEER_GONE))


def _ended(pid: int) -> bool:
    """Whether the process ``pid`` (of this host) has ended (a zombie counts)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False
    return state in ("Z", "X")


def ended_ranks(rank: int, wait_s: float = 2.0) -> list[int]:
    """The other ranks whose processes (on this host) have ended; waits up to ``wait_s`` for
    one whose connection has closed to be gone."""
    host = socket.gethostname()
    deadline = time.monotonic() + wait_s
    while True:
        ended = [other for other, (name, pid) in enumerate(_processes)
                 if other != rank and name == host and _ended(pid)]
        if ended or time.monotonic() >= deadline:
            return ended
        time.sleep(0.05)


def lost_rank_message(run_dir: Path, rank: int, size: int) -> str:
    """The one line a rank stops with when another one is gone."""
    ended = ended_ranks(rank) if size > 2 else [1 - rank]
    who = (f"rank{'s' if len(ended) > 1 else ''} {', '.join(map(str, ended))} of {size}"
           if ended else f"another of the {size} ranks")
    return (f"{run_dir}: {who} ended (killed, or stopped on an error of its own: see its "
            f"output), so rank {rank} stopped too; resume with the same command and --recover")


@contextmanager
def stop_on_lost_rank(run_dir: Path) -> Iterator[None]:
    """In a multi-process run, a collective that fails because another rank is gone stops
    this rank with a one-line ``TrainingStopped`` (``--recover`` resumes from ``last.pt``);
    the launcher's SIGTERM, which follows, no longer cuts that line short."""
    try:
        yield
    except RuntimeError as error:
        if not (dist.is_available() and dist.is_initialized() and lost_peer(error)):
            raise
        rank, size = dist.get_rank(), dist.get_world_size()
        with suppress(ValueError):  # outside the main thread no handler can be set
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise TrainingStopped(lost_rank_message(run_dir, rank, size)) from None


LEAVE_TIMEOUT_S = 600.0  # how long a finished rank waits at exit for the others


def _leave() -> None:
    """Take the process group down before the interpreter does, and only once every rank has
    reached its exit: a rank that tears its gloo group down while a peer still runs (rank 0
    writing the archive) can abort ("terminate called without an active exception") and turn
    a finished run into a failed one. The barrier is monitored: a peer that has died breaks
    it at once and one that hangs times it out (``LEAVE_TIMEOUT_S``), so neither holds the
    exit for ever."""
    if not dist.is_initialized():
        return
    try:
        _exit_barrier(LEAVE_TIMEOUT_S)
    except RuntimeError as error:  # a peer gone or stuck: leave anyway, without a traceback
        logger.debug("leaving without the other ranks: %s", error)
    finally:
        dist.destroy_process_group()


def _exit_barrier(timeout_s: float) -> None:
    """A barrier that cannot wait longer than ``timeout_s``: gloo's monitored barrier in a
    gloo group (every CPU run); a plain one elsewhere (NCCL's own timeout bounds it)."""
    if dist.get_backend() == dist.Backend.GLOO:
        dist.monitored_barrier(timeout=timedelta(seconds=timeout_s))
    else:
        dist.barrier()


def place_on_device(device: torch.device, world: World) -> torch.device:
    """Each rank of a multi-GPU run drives its own GPU, ``cuda:LOCAL_RANK`` (whatever index
    the config names: one config serves every rank)."""
    if world.distributed and device.type == "cuda":
        device = torch.device("cuda", world.local_rank % torch.cuda.device_count())
    if device.type == "cuda":
        torch.cuda.set_device(device)
    return device


def global_settings(settings: dict[str, Any], world: World) -> dict[str, Any]:
    """Loader settings for the global batch: ``batch_size`` (and ``max_tokens``,
    ``validation_batch_size``) are per rank, so the global batch is ``world.size`` times it."""
    if not world.distributed:
        return settings
    scaled = dict(settings)
    for key in ("batch_size", "max_tokens", "validation_batch_size"):
        if scaled.get(key):
            scaled[key] = scaled[key] * world.size
    return scaled


def share(group: list[int], world: World) -> list[int]:
    """This rank's share of a global batch's indices, dealt out in turn (a batch is sorted by
    length, so every rank gets long and short ones alike; sizes differ by at most 1)."""
    return group[world.rank:: world.size]


class ShardedLoader:
    """One rank's part of a loader's global batches (a loader with ``groups(epoch)`` and
    ``collate(group)``).

    Training: a global batch smaller than the number of ranks is left out (every rank must
    take part in every step); evaluation keeps everything, and a rank whose share is empty
    skips that batch. Each batch's ``weight`` is its share of the global batch times the
    number of ranks."""

    def __init__(self, loader: Any, world: World, train: bool) -> None:
        self.loader, self.world, self.train = loader, world, train
        self._warned: set[int] = set()
        if train:  # training data too small to share out is an error before the run starts
            self._kept(0)

    def _kept(self, epoch: int) -> list[list[int]]:
        groups = self.loader.groups(epoch)
        if not self.train:
            return groups
        kept = [group for group in groups if len(group) >= self.world.size]
        if groups and not kept:
            total = sum(len(group) for group in groups)
            raise DataError(f"the training data has {total} instance{'s' if total != 1 else ''}"
                            f", fewer than the {self.world.size} processes: no global batch "
                            f"can be shared out (train with fewer processes)")
        if len(kept) < len(groups) and epoch not in self._warned and self.world.main:
            self._warned.add(epoch)
            left = sum(len(group) for group in groups) - sum(len(group) for group in kept)
            logger.warning("epoch %d: %d instances in global batches smaller than the %d "
                           "ranks are left out of training", epoch + 1, left, self.world.size)
        return kept

    def batches(self, epoch: int) -> Iterator[Batch]:
        for group in self._kept(epoch):
            part = share(group, self.world)
            if not part:
                continue
            batch = self.loader.collate(part)
            batch.weight = self.world.size * len(part) / len(group)
            yield batch

    def num_batches(self, epoch: int) -> int:
        """Global batches this rank takes part in (the same count on every rank in training)."""
        return sum(1 for group in self._kept(epoch) if share(group, self.world))

    def __len__(self) -> int:
        return self.num_batches(0)

    def instances(self) -> list[dict[str, Any]]:
        return self.loader.instances()


def sharded(loader: Any, world: World, train: bool) -> Any:
    """``loader`` itself in one process, else this rank's ``ShardedLoader`` of it."""
    return ShardedLoader(loader, world, train) if world.distributed else loader


def summed_metric_states(metrics: list[Metric], world: World) -> list[dict[str, Any]]:
    """Every metric's state summed over the ranks (what a mid-epoch checkpoint keeps)."""
    out = []
    for states in zip(*world.gather([metric.state() for metric in metrics]), strict=True):
        total: dict[str, Any] = {}
        for state in states:
            total = add_states(total, state)
        out.append(total)
    return out


def merge_metric_states(metrics: list[Metric], world: World) -> None:
    """Replace every metric's state with the sum of all ranks' states (on every rank)."""
    if not world.distributed:
        return
    for metric, total in zip(metrics, summed_metric_states(metrics, world), strict=True):
        metric.reset()
        metric.merge(total)
