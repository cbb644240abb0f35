"""An explicit registry: each component declares its parameters; no reflection on annotations.

``@register("model", "crf_tagger", params=[...], context=("vocab",))`` records a builder and the
parameters a config may give it. Validation (``validate.py``) checks a whole config against these
declarations before anything is built; builders receive validated values and nested ``Spec``s.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from elmo_experiments.config.external import ExternalFiles
from elmo_experiments.errors import ConfigError, ConfigValueError, RegistryNotFilled


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
# a builder's default for a settings object whose declared default is {} (read-only: shared)
NO_SETTINGS: Mapping[str, Any] = MappingProxyType({})


PROBABILITY = (0.0, 1.0)
AT_LEAST_ONE = (1, math.inf)  # counts and sizes: batch sizes, epochs, layer widths
NON_NEGATIVE = (0.0, math.inf)


def positive(value: Any) -> str | None:
    """A ``Param.check``: the number must be above 0 (learning rates, norms)."""
    return None if not isinstance(value, int | float) or value > 0 else "must be greater than 0"


def below_one(value: Any) -> str | None:
    """A ``Param.check``: each number must lie in [0, 1) (Adam's betas, a decay factor)."""
    numbers = value if isinstance(value, list) else [value]
    if any(isinstance(v, int | float) and not 0 <= v < 1 for v in numbers):
        return f"each value must lie in [0, 1), got {value!r}"
    return None


def integers(value: Any) -> str | None:
    """A ``Param.check``: a list of integers (layer widths); ``bounds`` keeps each in range."""
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in value):
        return None
    return f"expected a list of integers, got {value!r}"


def sizes(value: Any) -> str | None:
    """A ``Param.check``: a non-empty list of integers (the layers of an encoder, the filter
    widths of a CNN); with ``bounds=AT_LEAST_ONE`` each is at least 1."""
    return "expected at least one size, got []" if value == [] else integers(value)


def pair(value: Any) -> str | None:
    """A ``Param.check``: two numbers in [0, 1) (Adam's betas)."""
    if not isinstance(value, list) or len(value) != 2:
        return f"expected two numbers, got {value!r}"
    return below_one(value)


@dataclass(frozen=True)
class Param:
    """One configurable parameter.

    ``kind``: the JSON type(s) accepted (``int``, ``float``, ``str``, ``bool``, ``list``, ``dict``;
    ``None`` accepts anything). ``component``: the registry category of a nested component;
    with ``mapping=True`` the value is an object of named components, with ``sequence=True`` a
    list of them. ``fields``: the parameters of a nested plain object. ``bounds``: the inclusive
    range of a number (``PROBABILITY`` for dropout rates). ``check``: a function that names
    what is wrong with a well-typed value (e.g. a biLM directory lacking its weights), or None.
    """

    name: str
    kind: type | tuple[type, ...] | None = None
    default: Any = REQUIRED
    component: str | None = None
    mapping: bool = False
    sequence: bool = False
    fields: tuple[Param, ...] | None = None
    choices: tuple[Any, ...] | None = None
    doc: str = ""
    bounds: tuple[float, float] | None = None  # inclusive range of a number (or of each in a list)
    check: Callable[[Any], str | None] | None = None  # a problem with the value, or None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Entry:
    """A registered component: its builder, declared parameters and build-time context."""

    category: str
    name: str
    builder: Callable[..., Any]
    params: tuple[Param, ...]
    context: tuple[str, ...] = ()
    check: Callable[[dict[str, Any]], str | None] | None = None  # across params, or None
    external_files: ExternalFiles | None = None  # the files it reads besides its config


@dataclass
class Spec:
    """A validated component config; ``build`` passes its params plus context to the builder."""

    entry: Entry
    params: dict[str, Any]
    path: str
    raw: dict[str, Any] = field(default_factory=dict)

    def build(self, **context: Any) -> Any:
        """Call the builder with the params and the context names it declares (others ignored)."""
        missing = [name for name in self.entry.context if name not in context]
        if missing:
            raise TypeError(f"{self.path}: builder needs context {missing}")
        try:
            return self.entry.builder(**self.params, **{k: context[k] for k in self.entry.context})
        except ConfigValueError as error:  # a value the schema admits but the component refuses
            raise ConfigError([f"{self.path}: {error}"]) from None


_REGISTRY: dict[str, dict[str, Entry]] = {}
_FILLED = False  # set by elmo_experiments.components.load(), which the entry points call
NOT_FILLED = ("the component registry is not filled yet: call elmo_experiments.components.load() "
              "first (the elmo-exp command, elmo_experiments.api and elmo_experiments.testing "
              "do it)")


def mark_filled() -> None:
    """Every component is registered: lookups may start."""
    global _FILLED
    _FILLED = True


def filled() -> bool:
    return _FILLED


def _registry() -> dict[str, dict[str, Entry]]:
    if not _FILLED:
        raise RegistryNotFilled(NOT_FILLED)
    return _REGISTRY


def register(
    category: str,
    name: str,
    params: list[Param] | tuple[Param, ...],
    context: tuple[str, ...] = (),
    check: Callable[[dict[str, Any]], str | None] | None = None,
    external_files: ExternalFiles | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``builder`` under ``category``/``name`` with its declared parameters;
    ``check`` names a problem among the values together (e.g. two ways to give one thing);
    ``external_files``: the files it reads besides its config (``config/external.py``)."""

    def decorate(builder: Callable[..., Any]) -> Callable[..., Any]:
        entries = _REGISTRY.setdefault(category, {})
        if name in entries and entries[name].builder is not builder:
            raise ValueError(f"{category} {name!r} is registered twice")
        entries[name] = Entry(category, name, builder, tuple(params), context, check,
                              external_files)
        return builder

    return decorate


def categories() -> list[str]:
    return sorted(_registry())


def entries(category: str) -> dict[str, Entry]:
    return dict(_registry().get(category, {}))


def suggest(word: str, options: list[str] | tuple[str, ...]) -> str:
    """A ``; did you mean X?`` suffix, or an empty string."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def lookup(category: str, name: str) -> Entry | str:
    """The entry, or a one-line problem naming the known alternatives."""
    known = _registry().get(category, {})
    if name in known:
        return known[name]
    hint = suggest(name, sorted(known))
    if not hint:
        hint = f" (known: {', '.join(sorted(known)) or 'none'})"
    return f"unknown {category} type {name!r}{hint}"
