"""Every registered component's declared parameters agree with its builder's signature: the
same names, the same requiredness, the same defaults (a list and a tuple, a dict and a
read-only mapping of the same items count as the same); build-time context is left out."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import elmo_experiments.components  # noqa: F401  (every component registered)
from elmo_experiments.config.registry import Entry, categories, entries

EMPTY = inspect.Parameter.empty


def canonical(value: Any) -> Any:
    """``value`` with sequences as tuples, mappings as sorted pairs and each leaf's type kept
    (``1`` is not ``1.0`` nor ``True``)."""
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((k, canonical(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("sequence", tuple(canonical(v) for v in value))
    return (type(value).__name__, value)


def disagreements(entry: Entry) -> list[str]:
    """How ``entry``'s declarations differ from its builder's signature."""
    signature = inspect.signature(entry.builder).parameters
    open_ended = any(p.kind is p.VAR_KEYWORD for p in signature.values())
    where = f"{entry.category} {entry.name!r}"
    found = []
    for param in entry.params:
        built = signature.get(param.name)
        if built is None:
            if not open_ended:
                found.append(f"{where}: {param.name} is not a parameter of its builder")
            continue
        if param.required and built.default is not EMPTY:
            found.append(f"{where}: {param.name} is required, the builder's default is "
                         f"{built.default!r}")
        elif not param.required and built.default is EMPTY:
            found.append(f"{where}: {param.name} defaults to {param.default!r}, the builder "
                         f"requires it")
        elif not param.required and canonical(built.default) != canonical(param.default):
            found.append(f"{where}: {param.name} defaults to {param.default!r}, the builder's "
                         f"to {built.default!r}")
    declared = {param.name for param in entry.params} | set(entry.context)
    for built in signature.values():
        plain = built.kind not in (built.VAR_KEYWORD, built.VAR_POSITIONAL)
        if plain and built.name not in declared and built.default is EMPTY:
            found.append(f"{where}: the builder requires {built.name}, which is not declared")
    return found


def test_every_registered_declaration_agrees_with_its_builder() -> None:
    found = [problem for category in categories()
             for entry in entries(category).values() for problem in disagreements(entry)]
    assert found == []


def test_a_disagreement_is_found() -> None:
    from elmo_experiments.config.registry import Param

    def builder(vocab: Any, size: int, width: int = 3, extra: str = "x") -> None: ...

    entry = Entry("model", "toy", builder, (Param("size", int, 300), Param("width", int, 4),
                                            Param("extra", str)), ("vocab",))
    assert disagreements(entry) == [
        "model 'toy': size defaults to 300, the builder requires it",
        "model 'toy': width defaults to 4, the builder's to 3",
        "model 'toy': extra is required, the builder's default is 'x'"]
