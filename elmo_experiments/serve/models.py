"""The served models: loaded once, by name; requests checked against limits and turned into the
task's instances; predictions made in batches by the project's ``Predictor`` and returned as the
records ``elmo-exp predict`` writes, with what a reader needs to show them. What is
particular to a task (its model types, how a request item becomes its instances, what a record
gains for display) comes from the task folder's ``serving`` registration
(``task_serving.py``); a model no task claims takes its reader's own instance JSON.

Nothing here needs the web framework: ``app.py`` maps ``RequestError`` to a 4xx answer.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.api import Predictor
from elmo_experiments.errors import ConfigError, ElmoError
from elmo_experiments.serve.task_serving import Limits, RequestError, serving_for
from elmo_experiments.serve.task_serving import text as _text
from elmo_experiments.serve.task_serving import tokens as _tokens
from elmo_experiments.serve.turns import Turns, TurnTimeout

__all__ = ["Embedder", "Limits", "RequestError", "ServedModel", "model_names", "request_items"]


def _listed(body: dict[str, Any], key: str, limits: Limits) -> list[Any]:
    """``body[key]``, checked to be a list of at most ``limits.max_items`` items."""
    items = body[key]
    if not isinstance(items, list):
        raise RequestError(key, f"must be a list, got {type(items).__name__}")
    if len(items) > limits.max_items:
        raise RequestError(key, f"{len(items)} items, over the limit of {limits.max_items}", 413)
    return items


def request_items(body: Any, limits: Limits) -> tuple[list[dict[str, Any]], str]:
    """The inputs of a request body: ``{"text": ...}``, ``{"texts": [...]}``,
    ``{"instances": [{...}]}`` or one instance's fields; and the prefix its errors name."""
    if not isinstance(body, dict):
        raise RequestError("body", f"must be a JSON object, got {type(body).__name__}")
    given = [key for key in ("text", "texts", "instances") if key in body]
    if len(given) > 1:
        raise RequestError(given[1], f"give one of text, texts, instances (got {given})")
    if given == ["texts"] or given == ["instances"]:
        key = given[0]
        others = sorted(set(body) - {key})
        if others:
            raise RequestError(others[0], f"give the inputs in {key} alone")
        items = _listed(body, key, limits)
        if key == "texts":
            return [{"text": _text(t, f"texts[{i}]", limits)} for i, t in enumerate(items)], key
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise RequestError(f"instances[{i}]", "must be a JSON object")
        return items, key
    return [body], ""


def in_turns(turns: Turns, items: list[Any], work: Callable[[list[Any]], list[Any]],
             limits: Limits, deadline: float | None) -> list[Any]:
    """``work`` over ``items``, ``limits.chunk_instances`` at a turn of ``turns`` (requests
    take turns at a model chunk by chunk); its results joined. Past ``deadline``: a 504."""
    results: list[Any] = []
    size = max(1, limits.chunk_instances)
    for start in range(0, len(items), size):
        if deadline is not None and time.monotonic() > deadline:
            raise _timed_out(limits)
        try:
            with turns.hold(deadline):
                results += work(items[start:start + size])
        except TurnTimeout:
            raise _timed_out(limits) from None
    return results


def _timed_out(limits: Limits) -> RequestError:
    return RequestError("request", f"not answered within {limits.timeout_s:g} s (the server "
                                   f"is busy, or the request is large): retry, or send less",
                        504)


class ServedModel:
    """One loaded model: its ``Predictor``, task, config digest, biLM and learned layer
    weights. ``predict`` is safe to call from several threads: requests take turns at the
    model a chunk of instances at a time (``Turns``)."""

    def __init__(self, name: str, path: str | Path, device: str = "cpu") -> None:
        from elmo_experiments.training.archive import extract_archive
        from elmo_experiments.training.run_dir import config_digest, read_config

        self.name = name
        self.path = Path(path)
        self.predictor = Predictor.from_path(path, device)
        run = self.predictor.run
        model_type = run.experiment.raw["model"]["type"]
        self.task, self.serving = serving_for(model_type)
        folder = extract_archive(self.path) if self.path.is_file() else self.path
        config = read_config(folder)
        self.config_sha256 = config_digest(config)
        self.bilm = _bilm_info(config, folder)
        self.turns = Turns()

    def layer_weights(self) -> list[dict[str, Any]]:
        """Each ELMo embedder's mixes: normalised layer weights s and γ (the paper's eq. 1)."""
        from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder

        return [{"embedder": name, "mixes": module.mix_report()}
                for name, module in self.predictor.run.model.named_modules()
                if isinstance(module, ElmoTokenEmbedder)]

    def biLM_module(self) -> Any:
        """The model's (frozen) biLM, or None."""
        from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder

        for module in self.predictor.run.model.modules():
            if isinstance(module, ElmoTokenEmbedder):
                return module.runner.bilm
        return None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "task": self.task, "path": str(self.path),
                "config_sha256": self.config_sha256, "bilm": self.bilm,
                "inputs": self.serving.inputs if self.serving else "instances",
                "layer_weights": self.layer_weights()}

    def predict(self, body: Any, limits: Limits, deadline: float | None = None
                ) -> dict[str, Any]:
        """One result per input (a list of records), all inputs predicted as batches, taking
        turns at the model with other requests; a 504 ``RequestError`` past ``deadline``
        (``time.monotonic()`` seconds)."""
        items, key = request_items(body, limits)
        if key == "texts" and self.serving is not None and not self.serving.texts:
            raise RequestError("texts", f"a text alone is no input of a {self.task} model, "
                                        f"which takes {self.serving.inputs}: give instances")
        reader = self.predictor.run.reader
        groups: list[list[dict[str, Any]]] = []
        for i, item in enumerate(items):
            where = f"{key}[{i}]." if key else ""
            try:
                groups.append(self._instances(item, where, limits, reader))
            except RequestError:
                raise
            except ElmoError as error:  # the reader refuses it (a DataError)
                raise RequestError(where.rstrip(".") or "body", str(error)) from None
        total = sum(len(g) for g in groups)
        if total > limits.max_items * 64:
            raise RequestError(key or "body", f"{total} instances, over the limit of "
                                              f"{limits.max_items * 64}", 413)
        flat = [instance for group in groups for instance in group]
        owner = {id(instance): i for i, group in enumerate(groups) for instance in group}

        def predicted(chunk: list[dict[str, Any]]) -> list[dict[str, Any]]:
            try:
                return self.predictor.predict_instances(chunk)
            except ElmoError as error:  # an instance the model refuses (over its token limit)
                found = re.search(r"instance (\d+): (.*)", str(error))
                item = owner[id(chunk[int(found[1]) - 1])] if found else None
                where = f"{key}[{item}]" if key and item is not None else key or "body"
                reason = (found[2] if found else str(error)).split(";")[0]
                raise RequestError(where, reason, 413 if "over data_loader" in reason else 400
                                   ) from None

        records = in_turns(self.turns, flat, predicted, limits, deadline)
        results, start = [], 0
        enrich = self.serving.enrich if self.serving and self.serving.enrich else None
        for group in groups:
            chunk = records[start: start + len(group)]
            start += len(group)
            results.append([enrich(dict(r), inst) if enrich else dict(r)
                            for r, inst in zip(chunk, group, strict=True)])
        if self.serving is not None and self.serving.finish is not None:
            results = [self.serving.finish(item, result)
                       for item, result in zip(items, results, strict=True)]
        return {"model": self.name, "task": self.task, "results": results}

    def _instances(self, item: dict[str, Any], where: str, limits: Limits,
                   reader: Any) -> list[dict[str, Any]]:
        if self.serving is None:
            return [item]  # a task without serving hooks: the reader's own fields
        return self.serving.instances(item, where, limits, reader)


def _bilm_info(config: dict[str, Any], folder: Path) -> list[dict[str, Any]]:
    """The biLM(s) the model was trained with: the config's ``weights`` and, for an archive,
    the SHA-1 its manifest recorded."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "elmo":
                found.append({"weights": node.get("weights") or node.get("weight_file")})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(config.get("model", {}))
    manifest = folder / "archive.json"
    if manifest.is_file():
        entries = json.loads(manifest.read_text(encoding="utf-8")).get("bilm") or []
        for info, entry in zip(found, entries, strict=False):
            info["sha1"] = entry.get("sha1")
            if entry.get("name"):
                info["name"] = entry["name"]
    return found


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # one segment of the URL /predict/NAME


def model_names(paths: list[str]) -> dict[str, str]:
    """A name per run directory or archive: the run directory's name (an archive's folder
    name for ``model.tar.gz``), made unique with ``-2``, ``-3``; ``NAME=PATH`` names it (a
    path that exists is a path, ``=`` and all). A given name must be one URL segment:
    letters, digits, ``_``, ``-``, ``.``, not ``..`` (a ``ConfigError`` otherwise); a derived
    one has other characters replaced by ``-``."""
    given: list[tuple[str, str]] = []  # (name, or "" to derive one; path)
    for spec in paths:
        named = "=" in spec and not Path(spec).exists()
        name, _, path = spec.partition("=") if named else ("", "", spec)
        if named and (not NAME.fullmatch(name) or ".." in name):
            raise ConfigError([f"model name {name!r} (in {spec!r}): a name is part of the "
                               f"URL /predict/NAME, so it may hold letters, digits, '_', '-' "
                               f"and '.' only, and not '..'"], source="serve")
        if name and name in dict(given):
            raise ConfigError([f"model name {name!r} is given twice (in {spec!r})"],
                              source="serve")
        given.append((name, path))
    names: dict[str, str] = {}
    taken = {name for name, _ in given if name}  # a given name is never renamed
    for name, path in given:
        if not name:
            p = Path(path)
            name = p.parent.name if p.name == "model.tar.gz" else p.name.split(".")[0]
            name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "model"
            base, n = name, 1
            while name in taken:
                n += 1
                name = f"{base}-{n}"
            taken.add(name)
        names[name] = path
    return names


class Embedder:
    """``/embed``: a biLM's layers for token lists, as chosen layers or a weighted mix."""

    def __init__(self, name: str, embedder: Any) -> None:
        self.name = name
        self.embedder = embedder  # an ElmoEmbedder
        self.turns = Turns()

    def embed(self, body: Any, limits: Limits, deadline: float | None = None
              ) -> dict[str, Any]:
        """The vectors of every sentence, taking turns at the biLM a chunk at a time (as
        ``ServedModel.predict``); a 504 past ``deadline``."""
        from elmo_experiments.data.tokenizers import tokenize

        if not isinstance(body, dict):
            raise RequestError("body", f"must be a JSON object, got {type(body).__name__}")
        if ("tokens" in body) == ("texts" in body):
            raise RequestError("tokens", "give tokens (a list of token lists) or texts "
                                         "(a list of strings), one of them")
        key = "tokens" if "tokens" in body else "texts"
        items = _listed(body, key, limits)
        if key == "tokens":
            sentences = [_tokens(t, f"tokens[{i}]", limits) for i, t in enumerate(items)]
        else:
            sentences = [tokenize(_text(t, f"texts[{i}]", limits)) for i, t in enumerate(items)]
            for i, sentence in enumerate(sentences):
                if len(sentence) > limits.max_tokens:
                    raise RequestError(f"texts[{i}]", f"{len(sentence)} tokens, over the "
                                                      f"limit of {limits.max_tokens}", 413)
        num_layers = self.embedder.num_layers
        layers, mix, gamma = _selection(body, num_layers)
        arrays = in_turns(self.turns, sentences, self.embedder.embed_batch, limits, deadline)
        out = []
        for tokens, array in zip(sentences, arrays, strict=True):
            if mix is not None:
                with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                    vectors = gamma * np.tensordot(np.asarray(mix, dtype=np.float32), array,
                                                   axes=1)
                if not np.isfinite(vectors).all():
                    raise RequestError("mix", "the mixed vectors overflow float32: the weights "
                                              "(times gamma) are too large")
            else:
                vectors = array[layers]
            out.append({"tokens": tokens, "vectors": vectors.tolist()})
        return {"bilm": self.name, "dim": self.embedder.dim, "num_layers": num_layers,
                "layers": None if mix is not None else layers, "mix": mix, "gamma": gamma,
                "embeddings": out}


def _number(value: Any, field: str) -> float:
    """A finite JSON number (not a boolean) as a float."""
    try:
        number = float(value) if isinstance(value, int | float) and not isinstance(
            value, bool) else math.nan
    except OverflowError:  # an integer beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise RequestError(field, f"must be a finite number, got {repr(value)[:40]}")
    return number


def _selection(body: dict[str, Any], num_layers: int
               ) -> tuple[list[int], list[float] | None, float]:
    """``layers`` (indices, default all) or ``mix`` (one weight per layer, softmax-normalised
    when ``normalize`` is true) and ``gamma`` (the mix's scale); a null is no value."""
    body = {key: value for key, value in body.items() if value is not None}
    if "layers" in body and "mix" in body:
        raise RequestError("mix", "give layers or mix, not both")
    for key in ("normalize", "gamma"):
        if key in body and "mix" not in body:
            raise RequestError(key, "applies to a mix: give mix too, or leave it out")
    layers = body.get("layers", list(range(num_layers)))
    if layers == "all":
        layers = list(range(num_layers))
    if not isinstance(layers, list) or not layers or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < num_layers
            for i in layers):
        raise RequestError("layers", f"must be a non-empty list of layer indices 0 to "
                                     f"{num_layers - 1}")
    mix = body.get("mix")
    if mix is not None:
        if not isinstance(mix, list) or len(mix) != num_layers:
            raise RequestError("mix", f"must be a list of {num_layers} numbers (one weight "
                                      f"per layer)")
        mix = [_number(w, f"mix[{i}]") for i, w in enumerate(mix)]
        normalize = body.get("normalize", False)
        if not isinstance(normalize, bool):
            raise RequestError("normalize", f"must be true or false, got {normalize!r}")
        if normalize:
            mix = torch.softmax(torch.tensor(mix, dtype=torch.float64), dim=0).tolist()
    return layers, mix, _number(body.get("gamma", 1.0), "gamma")
