"""Turns: the model lock is handed over in the order it was asked for, and a wait has a
deadline."""

from __future__ import annotations

import threading
import time

import pytest

from elmo_experiments.serve.turns import Turns, TurnTimeout


def test_waiters_get_their_turn_in_order_even_against_a_holder_that_asks_again() -> None:
    turns, order = Turns(), []
    first = threading.Event()

    def greedy() -> None:  # holds, lets the others queue, then asks again at once
        with turns.hold():
            first.set()
            while turns.waiting < 2:
                time.sleep(0.001)
            order.append("greedy 1")
        with turns.hold():
            order.append("greedy 2")

    def polite(name: str) -> None:
        with turns.hold():
            order.append(name)

    threads = [threading.Thread(target=greedy)]
    threads[0].start()
    first.wait()
    threads.append(threading.Thread(target=polite, args=("a",)))
    threads[-1].start()
    while turns.waiting < 1:  # "a" queues first; the count cannot drop before "b" queues too
        time.sleep(0.001)
    threads.append(threading.Thread(target=polite, args=("b",)))
    threads[-1].start()  # not waited for here: greedy waits for it, then the count drops at
    # once (waiting for a count that a hand-over may already have lowered hung under load)
    for thread in threads:
        thread.join(timeout=10)
    assert order == ["greedy 1", "a", "b", "greedy 2"]


def test_a_wait_past_its_deadline_gives_up_and_leaves_the_queue() -> None:
    turns, release = Turns(), threading.Event()

    def holder() -> None:
        with turns.hold():
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    while not turns._held:
        time.sleep(0.001)
    started = time.monotonic()
    with pytest.raises(TurnTimeout), turns.hold(time.monotonic() + 0.05):
        pass
    assert time.monotonic() - started < 5 and turns.waiting == 0
    release.set()
    thread.join(timeout=10)
    with turns.hold(time.monotonic() + 1):  # free again
        pass
