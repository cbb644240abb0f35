"""A component's parameters are declared once, in its builder's signature: the registry reads
names, defaults, requiredness and JSON types from it, and bounds, checks, choices and nested
components from its annotations; a ``Param`` given to ``register`` only adds to them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import pytest

from elmo_experiments.config.registry import (
    PROBABILITY,
    REQUIRED,
    Bounds,
    Check,
    Encoder,
    Param,
    Probability,
    Size,
    Spec,
    builder_params,
    positive,
)


def _odd(value: Any) -> str | None:
    return None if value % 2 else "must be odd"


class Toy:
    def __init__(self, vocab: Any, encoder: Encoder, size: Size, *,
                 dropout: Probability = 0.5, rate: Annotated[float, Check(positive)] = 1e-3,
                 mode: Literal["fast", "exact"] = "fast", widths: Sequence[int] = (3, 4),
                 odd: Annotated[int, Bounds(1, 9), Check(_odd)] = 3,
                 marker: str | None = "-DOC-", name: str | None = None,
                 anything: Any = None) -> None: ...


def test_a_signature_is_the_declaration() -> None:
    params = {p.name: p for p in builder_params("model 'toy'", Toy, (), ("vocab",))}
    assert list(params) == ["encoder", "size", "dropout", "rate", "mode", "widths", "odd",
                            "marker", "name", "anything"]  # the context (vocab) is not one
    assert params["encoder"] == Param("encoder", None, REQUIRED, component="seq2seq_encoder")
    assert params["size"] == Param("size", int, REQUIRED, bounds=(1, float("inf")))
    assert params["dropout"] == Param("dropout", float, 0.5, bounds=PROBABILITY)
    assert params["rate"] == Param("rate", float, 1e-3, check=positive)
    assert params["mode"] == Param("mode", str, "fast", choices=("fast", "exact"))
    assert params["widths"] == Param("widths", list, (3, 4))
    assert params["odd"] == Param("odd", int, 3, bounds=(1, 9), check=_odd)
    assert params["marker"].kind == (str, type(None))  # null admitted beside a default
    assert params["name"].kind is str and params["name"].default is None
    assert params["anything"].kind is None


def test_a_param_given_adds_what_the_signature_cannot_say() -> None:
    fields = (Param("weight", float, 1.0),)
    params = builder_params("model 'toy'", Toy, [Param("widths", fields=fields,
                                                       sequence=True)], ("vocab",))
    widths = next(p for p in params if p.name == "widths")
    assert widths.fields == fields and widths.sequence and widths.default == (3, 4)


def test_a_default_given_twice_and_differently_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^model 'toy': dropout defaults to 0.1 here, to 0.5 "
                                         r"in its builder: give it once, in the builder$"):
        builder_params("model 'toy'", Toy, [Param("dropout", float, 0.1)], ("vocab",))
    with pytest.raises(ValueError, match=r"^model 'toy': width not parameters of its builder"):
        builder_params("model 'toy'", Toy, [Param("width", int, 3)], ("vocab",))


def test_an_open_ended_builder_takes_its_declared_params() -> None:
    def build(input_dim: int, **params: Any) -> Spec: ...

    params = builder_params("seq2seq_encoder 'x'", build, [Param("hidden", int, 3)],
                            ("input_dim",))
    assert [p.name for p in params] == ["hidden"]
