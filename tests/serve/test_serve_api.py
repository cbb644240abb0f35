"""``elmo-exp serve``'s JSON API: models by name, predictions in batches equal to the
Predictor's, every task's input and output, /embed equal to ElmoEmbedder's, and 4xx JSON
errors (never a dead server) for malformed, mistyped and oversized requests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="fastapi's TestClient needs httpx")

from fastapi.testclient import TestClient

from elmo_experiments import ElmoEmbedder, Predictor
from elmo_experiments.serve.app import create_app, load_models
from elmo_experiments.serve.models import Limits, model_names

TEXT = "John Smith lives in Paris. He works for the United Nations."


@pytest.fixture(scope="module")
def client(archive_of, tiny_bilm_dir: Path) -> TestClient:
    models, embedders = load_models([f"ner={archive_of('ner')}", str(archive_of("sst5"))],
                                    bilm=str(tiny_bilm_dir), device="cpu")
    limits = Limits(max_body_bytes=20_000, max_items=4, max_chars=2_000, max_tokens=50)
    return TestClient(create_app(models, embedders, limits), raise_server_exceptions=False)


def test_models_lists_name_task_digest_and_biLM(client: TestClient) -> None:
    models = client.get("/models").json()["models"]
    assert [(m["name"], m["task"]) for m in models] == [("ner", "ner"), ("sst5", "sst5")]
    for m in models:
        assert len(m["config_sha256"]) == 64 and len(m["bilm"][0]["sha1"]) == 40
        weights = m["layer_weights"][0]["mixes"][0]["weights"]
        assert len(weights) == 3 and abs(sum(weights) - 1) < 1e-4


def test_predictions_equal_the_predictors_one_text_or_a_batch(client: TestClient,
                                                               archive_of) -> None:
    expected = Predictor.from_path(archive_of("ner")).predict(TEXT)
    one = client.post("/predict/ner", json={"text": TEXT})
    assert one.status_code == 200, one.text
    assert one.json()["results"] == [expected]
    batch = client.post("/predict/ner", json={"texts": [TEXT, "Paris .", ""]}).json()
    assert batch["results"][0] == expected and len(batch["results"][1]) == 1
    assert batch["results"][2] == []
    tokens = client.post("/predict/ner", json={"instances": [{"tokens": ["Paris", "."]}]})
    assert tokens.json()["results"][0][0]["tokens"] == ["Paris", "."]
    sst = client.post("/predict/sst5", json={"text": "A fine film."}).json()["results"][0][0]
    assert set(sst["probabilities"]) == {"0", "1", "2", "3", "4"} and sst["label"] in "01234"


def test_the_demo_page_and_its_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "demo.js" in page.text
    for name in ("demo.js", "demo.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert "http" not in client.get("/static/demo.js").text.replace("http://HOST", "")


@pytest.mark.parametrize(("request_args", "status", "field"), [
    ({"content": b"{not json"}, 400, "body"),
    ({"content": b"\xff\xfe"}, 400, "body"),
    ({"json": [1, 2]}, 400, "body"),
    ({"json": {"text": 3}}, 400, "text"),
    ({"json": {"texts": "a"}}, 400, "texts"),
    ({"json": {"texts": ["a", 1]}}, 400, "texts[1]"),
    ({"json": {"texts": ["a"] * 5}}, 413, "texts"),
    ({"json": {"text": "a " * 1500}}, 413, "text"),
    ({"json": {"text": "word " * 60}}, 413, "text"),
    ({"json": {"instances": [{"tokens": "a b"}]}}, 400, "instances[0].tokens"),
    ({"json": {"instances": [{"tokens": ["a b"]}]}}, 400, "instances[0].tokens[0]"),
    ({"json": {"instances": [3]}}, 400, "instances[0]"),
    ({"json": {"instances": [{}]}}, 400, "instances[0].text"),
    ({"json": {"text": "a", "texts": ["b"]}}, 400, "texts"),
    ({"content": b'{"text": "' + b"a" * 30_000 + b'"}'}, 413, "body"),
])
def test_bad_requests_get_a_one_line_error_naming_the_field(client: TestClient,
                                                             request_args: dict[str, Any],
                                                             status: int, field: str) -> None:
    response = client.post("/predict/ner", **request_args)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error.startswith(f"{field}: ") and "\n" not in error
    assert client.post("/predict/ner", json={"text": "Paris ."}).status_code == 200  # alive


def test_unknown_models_and_paths_are_json_404s(client: TestClient) -> None:
    response = client.post("/predict/nope", json={"text": "a"})
    assert response.status_code == 404 and response.json()["error"].startswith("name: ")
    assert client.get("/nowhere").status_code == 404
    assert "error" in client.get("/nowhere").json()
    assert client.get("/predict/ner").status_code == 405


def test_embed_gives_layers_or_a_mix_as_ElmoEmbedder(client: TestClient,
                                                     tiny_bilm_dir: Path) -> None:
    reference = ElmoEmbedder(str(tiny_bilm_dir)).embed_batch([["The", "cat"], ["A"]])
    layers = client.post("/embed", json={"tokens": [["The", "cat"], ["A"]], "layers": [0, 2]})
    assert layers.status_code == 200, layers.text
    data = layers.json()
    assert data["bilm"] == str(tiny_bilm_dir) and data["dim"] == 8
    for got, want in zip(data["embeddings"], reference, strict=True):
        np.testing.assert_allclose(np.array(got["vectors"]), want[[0, 2]], atol=1e-5)
    mixed = client.post("/embed", json={"texts": ["The cat"], "mix": [0.5, 0.25, 0.25],
                                        "gamma": 2.0}).json()
    want = 2.0 * np.tensordot(np.array([0.5, 0.25, 0.25]), reference[0], axes=1)
    np.testing.assert_allclose(np.array(mixed["embeddings"][0]["vectors"]), want, atol=1e-5)
    own = client.post("/embed", json={"tokens": [["A"]], "bilm": "ner"}).json()
    np.testing.assert_allclose(np.array(own["embeddings"][0]["vectors"]), reference[1],
                               atol=1e-5)  # the NER model was trained on the same biLM
    for body, field in (({"tokens": [["a"]], "layers": [3]}, "layers"),
                        ({"tokens": [["a"]], "mix": [1, 2]}, "mix"),
                        ({"tokens": [["a"]], "bilm": "x"}, "bilm"),
                        ({"tokens": [["a"]], "gamma": "x"}, "gamma"),
                        ({"layers": [0]}, "tokens")):
        response = client.post("/embed", json=body)
        assert response.status_code == 400 and response.json()["error"].startswith(field)


def test_every_task_takes_its_inputs(archive_of) -> None:
    paths = {task: str(archive_of(task)) for task in ("srl", "coref", "squad", "snli")}
    models, _ = load_models([f"{t}={p}" for t, p in paths.items()], device="cpu")
    client = TestClient(create_app(models), raise_server_exceptions=False)
    srl = client.post("/predict/srl", json={"tokens": ["Anna", "ate", "it"],
                                            "predicates": [1]}).json()["results"][0]
    assert [(r["predicate"], r["predicate_index"]) for r in srl] == [("ate", 1)]
    assert all({"role", "start", "end", "text"} <= set(a) for a in srl[0]["arguments"])
    assert client.post("/predict/srl", json={"text": "Anna ate it."}).status_code == 200
    bad = client.post("/predict/srl", json={"tokens": ["a"], "predicates": [4]})
    assert bad.status_code == 400 and bad.json()["error"].startswith("predicates")
    both = client.post("/predict/srl", json={"text": "a b", "tokens": ["a", "b"],
                                             "predicates": [1]})
    assert both.json() == {"error": "tokens: give text or tokens, not both"}
    coref = client.post("/predict/coref", json={"text": "Anna came. She sat."}).json()
    record = coref["results"][0][0]
    assert record["tokens"] == ["Anna", "came", ".", "She", "sat", "."]
    assert record["sentence_starts"] == [0, 3] and isinstance(record["clusters"], list)
    squad = client.post("/predict/squad", json={"question": "Who?", "passage": "Anna did."})
    answer = squad.json()["results"][0][0]
    start, end = answer["best_span"]
    assert answer["passage_tokens"] == ["Anna", "did", "."] and 0 <= start <= end < 3
    assert client.post("/predict/squad", json={"question": "Who?"}).json()["error"] \
        .startswith("passage: ")
    snli = client.post("/predict/snli", json={"instances": [
        {"premise": "A man sleeps.", "hypothesis": "A person rests."}]}).json()["results"][0]
    assert set(snli[0]["probabilities"]) == {"entailment", "neutral", "contradiction"}
    assert client.post("/predict/snli", json={"premise": ""}).status_code == 400


def test_model_names() -> None:
    assert model_names(["runs/ner", "a/ner/model.tar.gz", "x=runs/sst5", "b/m.tar.gz"]) == {
        "ner": "runs/ner", "ner-2": "a/ner/model.tar.gz", "x": "runs/sst5", "m": "b/m.tar.gz"}
    assert model_names(["runs/my run"]) == {"my-run": "runs/my run"}  # one URL segment


def test_a_given_name_is_never_renamed_and_never_given_twice() -> None:
    from elmo_experiments.errors import ConfigError

    assert model_names(["runs/ner", "ner=runs/sst5"]) == {"ner": "runs/sst5",
                                                          "ner-2": "runs/ner"}
    with pytest.raises(ConfigError) as info:
        model_names(["ner=runs/ner", "ner=runs/sst5"])
    assert str(info.value) == "serve: model name 'ner' is given twice (in 'ner=runs/sst5')"


def test_a_host_that_is_no_address_is_refused_before_the_models_load() -> None:
    from elmo_experiments.errors import ConfigError
    from elmo_experiments.serve.app import serve

    with pytest.raises(ConfigError, match=r"^serve: --host '999\.1\.1\.1' \(port 8000\): not an "
                       r"address to listen on \(.+\)$"):
        serve(["no/such/run"], host="999.1.1.1")


def test_an_integer_too_long_for_python_is_named_as_such(client: TestClient) -> None:
    response = client.post("/embed", content=b'{"tokens": [["a"]], "layers": [' +
                           b"1" * 5_000 + b"]}")
    assert response.status_code == 400
    assert response.json()["error"] == (f"body: not JSON (an integer of more than "
                                        f"{sys.get_int_max_str_digits()} digits)")


def test_an_instance_over_the_models_token_limit_is_a_413_naming_the_input(
        archive_of) -> None:
    models, embedders = load_models([f"ner={archive_of('ner')}"], device="cpu")
    limits = Limits(max_body_bytes=1_000_000, max_items=4, max_chars=100_000,
                    max_tokens=100_000)
    client = TestClient(create_app(models, embedders, limits), raise_server_exceptions=False)
    tokens = ["a"] * 10_001  # the loader's max_instance_tokens: 10,000
    response = client.post("/predict/ner", json={"instances": [{"tokens": ["b"]},
                                                               {"tokens": tokens}]})
    assert response.status_code == 413, response.text
    assert response.json()["error"] == ("instances[1]: tokens: 10,001 tokens, over "
                                        "data_loader.max_instance_tokens (10,000)")


@pytest.mark.parametrize("name", ["a/b", "..", "x..y", "", "-x", "ner?"])
def test_a_name_that_is_no_url_segment_is_refused_at_start(name: str) -> None:
    from elmo_experiments.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        model_names([f"{name}=runs/ner"])
    assert str(info.value).splitlines() == [
        f"serve: model name {name!r} (in {name + '=runs/ner'!r}): a name is part of the URL "
        f"/predict/NAME, so it may hold letters, digits, '_', '-' and '.' only, and not '..'"]


def test_json_nested_thousands_deep_is_a_400_in_one_line(
        client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    for body in (b"[" * 9_000, b'{"text": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"):  # < 20 kB
        response = client.post("/predict/ner", content=body)
        assert response.status_code == 400
        assert response.json() == {"error": "body: JSON nested too deeply (thousands of "
                                            "levels) to read"}
    assert not [r for r in caplog.records if r.exc_info]  # no traceback in the log


def test_embed_numbers_beyond_float_and_overflowing_mixes_are_400s(client: TestClient) -> None:
    """Every number of a mix is checked as a float (a 400-digit integer is not one), and a mix
    whose vectors overflow is refused rather than answered with infinities."""
    for body, error in (
            ({"mix": [10**400, 1, 1]}, "mix[0]: must be a finite number, got 1000000"),
            ({"mix": [1, 1, 1], "gamma": 10**400}, "gamma: must be a finite number, got 1000"),
            ({"mix": [1e308, 1e308, 1e308]}, "mix: the mixed vectors overflow float32: the "
                                             "weights (times gamma) are too large"),
            ({"mix": [1, 1, 1], "normalize": "yes"}, "normalize: must be true or false, got "
                                                     "'yes'"),
            ({"layers": [0], "gamma": 2.0}, "gamma: applies to a mix: give mix too, or leave "
                                            "it out"),
            ({"normalize": True}, "normalize: applies to a mix: give mix too, or leave it out"),
            ({"mix": None, "gamma": 5}, "gamma: applies to a mix"),  # a null is no mix
            ({"mix": ["1", 1, 1]}, "mix[0]: must be a finite number, got '1'"),  # a string
            ({"mix": [1, 1, 1], "gamma": "2"}, "gamma: must be a finite number, got '2'"),
            ({"bilm": None, "mix": [1e39, 0, 0], "normalize": True}, None)):  # softmax: [1, 0, 0]
        response = client.post("/embed", json={"tokens": [["a", "b"]], **body})
        if error is None:
            assert response.status_code == 200, response.text
            continue
        assert response.status_code == 400
        assert response.json()["error"].startswith(error), response.json()
    for raw, kind in ((b"[]", "list"), (b"null", "NoneType"), (b'"text"', "str"), (b"12", "int")):
        response = client.post("/embed", content=raw)
        assert response.status_code == 400
        assert response.json()["error"] == f"body: must be a JSON object, got {kind}"


@pytest.mark.parametrize("body", [b'{"text": "\\ud800 Paris"}', b'{"\\udfff": "Paris"}',
                                  b'{"texts": ["a", ["b\\udbff"]]}'])
def test_a_lone_surrogate_anywhere_in_a_body_is_a_400(client: TestClient, body: bytes,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    response = client.post("/predict/ner", content=body)
    assert response.status_code == 400
    assert response.json()["error"].startswith("body: a string holds a lone surrogate ('\\ud")
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.parametrize(("body", "error"), [
    ({"text": "Anna lives in Paris.", "tokens": ["Anna"]}, "tokens: give text or tokens, not both"),
    ({"instances": [{"tokens": ["a"], "text": "b"}]},
     "instances[0].tokens: give text or tokens, not both"),
    ({"texts": ["a"], "tokens": ["b"]}, "tokens: give the inputs in texts alone"),
    ({"instances": [{"text": "a"}], "tokens": ["b"]}, "tokens: give the inputs in instances "
                                                      "alone")])
def test_two_ways_to_give_one_input_are_refused(client: TestClient, body: dict,
                                                error: str) -> None:
    response = client.post("/predict/ner", json=body)
    assert response.status_code == 400
    assert response.json()["error"] == error


def test_elmo_exp_serve_from_the_command_line(archive_of, tmp_path: Path) -> None:
    """The command itself: uvicorn serves the archive; bad JSON is a 400 and it carries on."""
    import os
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "elmo_experiments", "serve", f"tagger={archive_of('ner')}",
         "--port", str(port), "--device", "cpu"], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env={**os.environ, "ELMO_CACHE_DIR": str(tmp_path / "c")})
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 120
        while True:
            try:
                models = httpx.get(url + "/models", timeout=5).json()["models"]
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.3)
        assert [m["name"] for m in models] == ["tagger"]
        bad = httpx.post(url + "/predict/tagger", content=b"[", timeout=30)
        assert bad.status_code == 400 and bad.json()["error"].startswith("body: not JSON")
        good = httpx.post(url + "/predict/tagger", json={"text": "Paris ."}, timeout=60)
        assert good.status_code == 200 and good.json()["results"][0][0]["tokens"] == [
            "Paris", "."]
    finally:
        process.terminate()
        process.wait(timeout=30)
