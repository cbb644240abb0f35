"""``elmo-exp serve``: the JSON API and the demo page (FastAPI, the optional ``serve`` extra).

- ``GET /``: the demo page (``static/``: plain HTML, CSS and JavaScript, nothing fetched from
  the network), one view per loaded model.
- ``GET /models``: each model's name, task, config digest, biLM and learned layer weights.
- ``POST /predict/NAME``: ``{"text": ...}``, ``{"texts": [...]}``, ``{"instances": [...]}`` or
  one instance's fields; every input's records, all inputs predicted as batches.
- ``POST /embed``: biLM layers (``layers``) or a weighted ``mix`` for ``tokens`` or ``texts``.
- ``GET /health``: ``{"status": "ok", "in_flight": ..., "max_queue": ..., "models": [...]}``.

Bad input never takes the server down: malformed JSON, wrong types and oversized requests get a
4xx answer ``{"error": "FIELD: what is wrong"}``; an unexpected failure a 500 in the same form.

Under load: the forward passes run in worker threads, off the event loop, and requests take
turns at a model a few instances at a time (``turns.py``), so a short request is not held
behind a long one. At most ``Limits.max_queue`` requests are in flight; one more gets 503 at
once. A request not answered within ``Limits.timeout_s`` gets 504 (the work stops at its next
chunk).
"""

# No `from __future__ import annotations`: FastAPI reads the handlers' annotations (``Request``,
# imported inside ``create_app`` so that this module loads without the extra) as objects.
import json
import logging
import socket
import sys
import time
from pathlib import Path
from typing import Any

from elmo_experiments.serve.models import Embedder, Limits, RequestError, ServedModel
from elmo_experiments.serve.task_serving import plain_text

STATIC = Path(__file__).resolve().parent / "static"
logger = logging.getLogger(__name__)


def create_app(models: dict[str, ServedModel], embedders: dict[str, Embedder] | None = None,
               limits: Limits | None = None) -> Any:
    """The ASGI app over models already loaded (``load_models``)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect

    limits = limits or Limits()
    embedders = embedders or {}
    app = FastAPI(title="elmo-experiments", docs_url=None, redoc_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message.splitlines()[0] if message else "error"},
                            status_code=status)

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> JSONResponse:
        return error(exc.status, str(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return error(exc.status_code, f"path: {request.url.path}: {exc.detail}")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error(422, f"request: {exc.errors()[0].get('msg', 'invalid')}")

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("%s %s failed", request.method, request.url.path)
        return error(500, f"server: {type(exc).__name__}: {exc}")

    async def body_of(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limits.max_body_bytes:
            raise RequestError("body", f"{declared} bytes, over the limit of "
                                       f"{limits.max_body_bytes}", 413)
        data = b""
        try:
            async for chunk in request.stream():
                data += chunk
                if len(data) > limits.max_body_bytes:
                    raise RequestError("body", f"over the limit of {limits.max_body_bytes} "
                                               f"bytes", 413)
        except ClientDisconnect:  # a client that hangs up is normal traffic: one line
            logger.info("%s %s: the client hung up before sending its whole body",
                        request.method, request.url.path)
            raise RequestError("body", "the client hung up", 400) from None
        try:
            body = json.loads(data.decode("utf-8"))
        except RecursionError:
            raise RequestError("body", "JSON nested too deeply (thousands of levels) to "
                                       "read") from None
        except (UnicodeDecodeError, ValueError) as exc:
            reason = str(exc).splitlines()[0]
            if "integer string conversion" in reason:  # Python's guard against huge integers
                reason = f"an integer of more than {sys.get_int_max_str_digits()} digits"
            raise RequestError("body", f"not JSON ({reason})") from None
        plain_text(body)
        return body

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/models")
    def list_models() -> dict[str, Any]:
        return {"models": [model.describe() for model in models.values()],
                "bilms": sorted(embedders)}

    busy = {"in_flight": 0}  # requests admitted and not yet answered (the event loop's count)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "in_flight": busy["in_flight"], "max_queue": limits.max_queue,
                "timeout_s": limits.timeout_s, "models": sorted(models),
                "bilms": sorted(embedders)}

    async def in_turn(work: Any, request: Request, *args: Any) -> JSONResponse:
        """``work(*args, body, limits, deadline)`` in a worker thread, if the queue has room."""
        from starlette.concurrency import run_in_threadpool

        if busy["in_flight"] >= limits.max_queue:
            raise RequestError("server", f"busy: {busy['in_flight']} requests in flight, the "
                                         f"most it takes; retry shortly", 503)
        busy["in_flight"] += 1
        try:
            deadline = time.monotonic() + limits.timeout_s
            body = await body_of(request)
            return JSONResponse(await run_in_threadpool(work, *args, body, limits, deadline))
        finally:
            busy["in_flight"] -= 1

    @app.post("/predict/{name}")
    async def predict(name: str, request: Request) -> JSONResponse:
        model = models.get(name)
        if model is None:
            raise RequestError("name", f"no model {name!r} (loaded: {', '.join(models)})", 404)
        return await in_turn(model.predict, request)

    @app.post("/embed")
    async def embed(request: Request) -> JSONResponse:
        if not embedders:
            raise RequestError("bilm", "no biLM is loaded (start with --bilm)", 404)

        def chosen(body: Any, lim: Limits, deadline: float) -> dict[str, Any]:
            if not isinstance(body, dict):
                raise RequestError("body", f"must be a JSON object, got {type(body).__name__}")
            name = body.get("bilm")
            if name is None:  # absent or null: the default biLM
                name = next(iter(embedders))
            if not isinstance(name, str) or name not in embedders:
                raise RequestError("bilm", f"one of {', '.join(embedders)}")
            return embedders[name].embed(body, lim, deadline)

        return await in_turn(chosen, request)

    return app


def load_models(paths: list[str], bilm: str | None = None,
                device: str = "cpu") -> tuple[dict[str, ServedModel], dict[str, Embedder]]:
    """Every model loaded once, named by ``model_names``; an embedder for each model's biLM
    (named after the model) and for ``bilm`` (named as given; the default for ``/embed``)."""
    from elmo_experiments.bilm.elmo_embedder_compat import ElmoEmbedder
    from elmo_experiments.devices import resolve_device
    from elmo_experiments.serve.models import model_names

    device = str(resolve_device(device, "--device"))
    models = {name: ServedModel(name, path, device)
              for name, path in model_names(paths).items()}
    embedders: dict[str, Embedder] = {}
    if bilm is not None:
        embedders[bilm] = Embedder(bilm, ElmoEmbedder(weights=bilm,
                                                      cuda_device=_cuda_index(device)))
    for name, model in models.items():
        module = model.biLM_module()
        if module is not None:
            embedders[name] = Embedder(name, ElmoEmbedder.from_bilm(module))
    return models, embedders


def _cuda_index(device: str) -> int:
    if not device.startswith("cuda"):
        return -1
    return int(device.partition(":")[2] or 0)


def serve(paths: list[str], host: str = "127.0.0.1", port: int = 8000, bilm: str | None = None,
          device: str = "cpu", limits: Limits | None = None) -> None:
    """Load the models and serve them until interrupted."""
    from elmo_experiments.errors import ConfigError

    try:
        import uvicorn
    except ImportError:
        raise ConfigError(["elmo-exp serve needs the `serve` extra: pip install "
                           "'elmo-experiments[serve]'"]) from None
    try:  # before the models load: a host that is no address fails at once, named
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OverflowError) as error:
        raise ConfigError([f"--host {host!r} (port {port}): not an address to listen on "
                           f"({error})"], source="serve") from None
    models, embedders = load_models(paths, bilm, device)
    app = create_app(models, embedders, limits)
    uvicorn.run(app, host=host, port=port, log_level="info")
