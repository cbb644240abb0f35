"""``elmo-exp serve`` under a bounded load of concurrent clients on 127.0.0.1: a short request
is not held behind a long one; a request past its time limit gets 504 and one past the queue
503, at once; /health reports the load; memory stays flat over many requests."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the `serve` extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

from live_server import live_server  # noqa: E402

from elmo_experiments.serve.app import create_app, load_models  # noqa: E402
from elmo_experiments.serve.task_serving import Limits  # noqa: E402

SHORT = {"text": "Paris ."}
# 64 texts of 12 sentences: 768 instances, one a turn: seconds of work for the tiny model
LONG = {"texts": [" ".join(["John Smith lives in Paris ."] * 12)] * 64}


@pytest.fixture(scope="module")
def models(archive_of) -> dict:
    return load_models([f"ner={archive_of('ner')}"], device="cpu")[0]


def _limits(**given: float) -> Limits:
    return Limits(**{"max_items": 64, "max_chars": 2_000, "chunk_instances": 1, **given})


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def _post_in_background(url: str, body: dict, answers: dict) -> threading.Thread:
    def post() -> None:
        with httpx.Client(timeout=120) as client:
            response = client.post(f"{url}/predict/ner", json=body)
        answers.update(status=response.status_code, body=response.json(),
                       done=time.monotonic())

    thread = threading.Thread(target=post)
    thread.start()
    return thread


def _wait_in_flight(client: httpx.Client, url: str, count: int) -> None:
    deadline = time.monotonic() + 30
    while client.get(f"{url}/health").json()["in_flight"] < count:
        assert time.monotonic() < deadline, "the long request never arrived"
        time.sleep(0.01)


def test_short_requests_are_answered_while_a_long_one_runs(models: dict) -> None:
    with live_server(create_app(models, limits=_limits())) as url, \
            httpx.Client(timeout=60) as client:
        long: dict = {}
        thread = _post_in_background(url, LONG, long)
        _wait_in_flight(client, url, 1)
        shorts = []
        for _ in range(5):
            response = client.post(f"{url}/predict/ner", json=SHORT)
            assert response.status_code == 200, response.text
            shorts.append(time.monotonic())
        assert "done" not in long, "the long request ended first: too short to show anything"
        thread.join(timeout=120)
        assert long["status"] == 200 and len(long["body"]["results"]) == 64
        assert max(shorts) < long["done"]  # each short one came back while the long one ran
        assert client.get(f"{url}/health").json()["in_flight"] == 0


def test_past_its_time_limit_a_request_gets_504_and_the_server_goes_on(models: dict) -> None:
    with live_server(create_app(models, limits=_limits(timeout_s=0.3))) as url, \
            httpx.Client(timeout=60) as client:
        started = time.monotonic()
        response = client.post(f"{url}/predict/ner", json=LONG)
        assert response.status_code == 504
        assert response.json() == {"error": "request: not answered within 0.3 s (the server is "
                                             "busy, or the request is large): retry, or send "
                                             "less"}
        assert time.monotonic() - started < 30  # stopped at a chunk, not run to the end
        assert client.post(f"{url}/predict/ner", json=SHORT).status_code == 200
        assert client.get(f"{url}/health").json()["in_flight"] == 0


def test_a_full_queue_answers_503_at_once(models: dict) -> None:
    with live_server(create_app(models, limits=_limits(max_queue=1))) as url, \
            httpx.Client(timeout=60) as client:
        long: dict = {}
        thread = _post_in_background(url, LONG, long)
        _wait_in_flight(client, url, 1)
        response = client.post(f"{url}/predict/ner", json=SHORT)
        assert response.status_code == 503
        assert response.json()["error"] == ("server: busy: 1 requests in flight, the most it "
                                             "takes; retry shortly")
        health = client.get(f"{url}/health").json()
        assert health["status"] == "ok" and health["max_queue"] == 1
        thread.join(timeout=120)
        assert long["status"] == 200
        assert client.post(f"{url}/predict/ner", json=SHORT).status_code == 200


def test_memory_stays_flat_under_concurrent_clients(models: dict) -> None:
    body = {"texts": ["John Smith lives in Paris . He works in Berlin ."] * 8}
    with live_server(create_app(models, limits=_limits(chunk_instances=8))) as url:

        def client_loop(rounds: int) -> None:
            with httpx.Client(timeout=60) as client:
                for _ in range(rounds):
                    assert client.post(f"{url}/predict/ner", json=body).status_code == 200

        def load(rounds: int) -> None:
            clients = [threading.Thread(target=client_loop, args=(rounds,)) for _ in range(4)]
            for thread in clients:
                thread.start()
            for thread in clients:
                thread.join(timeout=120)

        load(3)  # warm up: allocator pools, caches, thread pool
        before = _rss_mb()
        load(15)  # 60 more requests, four clients at a time
        assert _rss_mb() - before < 40, (before, _rss_mb())


def test_clients_that_hang_up_cost_one_log_line_each_and_no_traceback(
        models: dict, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import socket

    caplog.set_level(logging.INFO)
    with live_server(create_app(models, limits=_limits())) as url:
        host, port = url.removeprefix("http://").split(":")
        for sent in (b"", b'{"text": "Par'):  # no body at all; half of one, then a stall
            caplog.clear()
            with socket.create_connection((host, int(port))) as sock:
                sock.sendall(b"POST /predict/ner HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             b"application/json\r\nContent-Length: 1000\r\n\r\n" + sent)
                time.sleep(0.2)
            deadline = time.monotonic() + 10
            while not caplog.records and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)
            records = [r for r in caplog.records if r.levelno >= logging.INFO
                       and "GET /health" not in r.getMessage()]
            assert len(records) <= 1, [r.getMessage() for r in records]
            assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
        with httpx.Client(timeout=30) as client:
            assert client.post(f"{url}/predict/ner", json=SHORT).status_code == 200
            assert client.get(f"{url}/health").json()["in_flight"] == 0
