"""Taking turns at one model: a lock handed over in the order it was asked for, with a deadline.

The server predicts a request in chunks of a few instances and holds its model's lock for one
chunk at a time, so that a short request waits for at most one chunk of a long one, never for
the whole of it. ``threading.Lock`` cannot promise that: a thread that releases it and asks
again at once usually takes it back before the threads already waiting.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager


class TurnTimeout(Exception):
    """The deadline passed before the turn came."""


class Turns:
    """A FIFO lock: ``with turns.hold(deadline):`` waits its turn, up to ``deadline``
    (``time.monotonic()`` seconds; None waits for ever), and raises ``TurnTimeout`` past it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._waiting: deque[threading.Event] = deque()
        self._held = False

    @contextmanager
    def hold(self, deadline: float | None = None) -> Iterator[None]:
        self._acquire(deadline)
        try:
            yield
        finally:
            self._release()

    @property
    def waiting(self) -> int:
        """How many threads wait for a turn."""
        with self._guard:
            return len(self._waiting)

    def _acquire(self, deadline: float | None) -> None:
        with self._guard:
            if not self._held and not self._waiting:
                self._held = True
                return
            turn = threading.Event()
            self._waiting.append(turn)
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        if turn.wait(timeout):
            return  # handed over by the holder: held now
        with self._guard:
            if turn.is_set():  # handed over just as the wait ran out: take it, then give back
                pass
            else:
                self._waiting.remove(turn)
                raise TurnTimeout
        self._release()
        raise TurnTimeout

    def _release(self) -> None:
        with self._guard:
            if self._waiting:
                self._waiting.popleft().set()  # the lock passes to the next, still held
            else:
                self._held = False
