"""Progress display shared by training, ``embed`` and ``perplexity``.

On a terminal it is a tqdm bar. When stderr is not a terminal (a log file, ``nohup``, CI), a
bar's carriage-return redraws would fill the log, so a plain line is printed instead, at most
once every ``PLAIN_INTERVAL_S`` seconds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, Generic, TextIO, TypeVar

from tqdm import tqdm

T = TypeVar("T")

PLAIN_INTERVAL_S = 60.0  # seconds between two plain progress lines


class PlainProgress(Generic[T]):
    """The subset of tqdm's interface we use (iterate, ``update``, ``set_postfix``), writing
    one line per ``interval`` seconds instead of redrawing a bar."""

    def __init__(self, iterable: Iterable[T] | None, total: int | None, desc: str, unit: str,
                 initial: int, stream: TextIO, interval: float) -> None:
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n = self.initial = initial
        self.stream, self.interval = stream, interval
        self.postfix: dict[str, Any] = {}
        self.start = self.last = time.perf_counter()
        self.written_at: int | None = None  # the count of the last line written

    def __iter__(self) -> Iterator[T]:
        if self.iterable is None:
            raise TypeError("this progress display has no iterable")
        for item in self.iterable:
            yield item
            self.update()
        self.close()

    def __enter__(self) -> PlainProgress[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """A last line for a long loop (one that wrote a line before), so the log shows its
        end; a short loop stays silent."""
        if self.written_at is not None and self.written_at != self.n:
            self._write(time.perf_counter())

    def set_postfix(self, values: dict[str, Any] | None = None, refresh: bool = True,
                    **more: Any) -> None:
        self.postfix = {**(values or {}), **more}

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.perf_counter()
        if now - self.last >= self.interval:
            self._write(now)

    def _write(self, now: float) -> None:
        self.last, self.written_at = now, self.n
        self.stream.write(self.line(now) + "\n")
        self.stream.flush()

    def line(self, now: float) -> str:
        """``desc: n/total unit (p%), rate unit/s, elapsed, ~left, key=value ...``."""
        elapsed = now - self.start
        rate = (self.n - self.initial) / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.desc + ': ' if self.desc else ''}{self.n}"
                 + (f"/{self.total}" if self.total else "") + f" {self.unit}"]
        if self.total:
            parts[0] += f" ({100 * self.n / self.total:.0f}%)"
        parts.append(f"{rate:.2f} {self.unit}/s")
        parts.append(f"{_clock(elapsed)} elapsed")
        if self.total and rate > 0:
            parts.append(f"~{_clock((self.total - self.n) / rate)} left")
        parts.extend(f"{key}={value}" for key, value in self.postfix.items())
        return ", ".join(parts)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "",
             unit: str = "it", initial: int = 0, enabled: bool = True,
             stream: TextIO | None = None, interval: float | None = None,
             **bar_options: Any) -> Any:
    """A tqdm bar over ``iterable`` on a terminal (``stream``, default stderr), plain lines
    every ``interval`` seconds (default ``PLAIN_INTERVAL_S``) elsewhere, nothing when not
    ``enabled``. Both support iteration, ``update`` and ``set_postfix``; ``bar_options`` go to
    tqdm only (e.g. ``leave``)."""
    stream = stream if stream is not None else sys.stderr
    if enabled and not _is_terminal(stream):
        return PlainProgress(iterable, total, desc, unit, initial, stream,
                             PLAIN_INTERVAL_S if interval is None else interval)
    options = {"leave": False, "dynamic_ncols": True, **bar_options}
    return tqdm(iterable, total=total, desc=desc or None, unit=unit, initial=initial,
                disable=not enabled, file=stream, **options)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
