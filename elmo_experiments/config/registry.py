"""The registry of components; each parameter is declared once, in its builder's signature.

``register("model", "crf_tagger", context=("vocab",))(CrfTagger)`` records a builder; the
parameters a config may give it are the builder's own (its context, what the assembly passes,
apart): name, default (none: required) and type from the signature, and what a signature cannot
say from ``Annotated`` metadata: ``Bounds`` (``Probability``, ``Size``: the common ones),
``Check`` and ``Component`` (a nested component's registry category), and ``Literal`` choices.
Validation (``validate.py``) checks a whole config against them before anything is built;
builders receive validated values and nested ``Spec``s. A ``Param`` given to ``register`` adds
to the signature's (a nested object's ``fields``), and an open-ended builder (``**params``)
declares all of its own.
"""

from __future__ import annotations

import difflib
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Annotated, Any, Literal

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


@dataclass(frozen=True, eq=False)  # by identity: typing caches Annotated[...] by equality, and
class Bounds:  # Bounds(0, inf) == Bounds(0.0, inf) would hand one module's bounds to another
    """``Annotated`` metadata: the inclusive range of a number (or of each number of a list)."""

    low: float
    high: float


@dataclass(frozen=True)
class Check:
    """``Annotated`` metadata: names what is wrong with a well-typed value, or None."""

    function: Callable[[Any], str | None]


@dataclass(frozen=True)
class Component:
    """``Annotated`` metadata: a nested component of registry ``category`` (``mapping``: an
    object of named ones, ``sequence``: a list of them)."""

    category: str
    mapping: bool = False
    sequence: bool = False


Probability = Annotated[float, Bounds(*PROBABILITY)]  # dropout rates
Positive = Annotated[float, Check(positive)]  # learning rates, norms
NonNegative = Annotated[float, Bounds(*NON_NEGATIVE)]  # weight decays, penalties
Size = Annotated[int, Bounds(*AT_LEAST_ONE)]  # counts and widths
Sizes = Annotated[Sequence[int], Bounds(*AT_LEAST_ONE), Check(sizes)]  # one width per layer
Widths = Annotated[Sequence[int], Bounds(*AT_LEAST_ONE), Check(integers)]  # layers, maybe none

_KINDS = {int: int, float: float, str: str, bool: bool, list: list, tuple: list, dict: dict,
          Sequence: list, Mapping: dict}


def _kind(annotation: Any) -> type | tuple[type, ...] | None:
    """The JSON type(s) an annotation admits (None: anything, e.g. ``Any`` or a ``Spec``)."""
    origin = typing.get_origin(annotation) or annotation
    if origin is Annotated:
        return _kind(typing.get_args(annotation)[0])
    if origin in (types.UnionType, typing.Union):
        kinds: list[type] = []
        for member in typing.get_args(annotation):
            if member is type(None):
                continue
            kind = _kind(member)
            if kind is None:
                return None
            kinds += kind if isinstance(kind, tuple) else [kind]
        unique = tuple(dict.fromkeys(kinds))
        return unique[0] if len(unique) == 1 else unique
    if origin is Literal:
        return _kind(type(typing.get_args(annotation)[0]))
    return _KINDS.get(origin)


def from_signature(name: str, annotation: Any, default: Any) -> Param:
    """A builder parameter as the validator checks it: its type, default and metadata."""
    metadata: tuple[Any, ...] = ()
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):  # Size | None
        present = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(present) == 1 and typing.get_origin(present[0]) is Annotated:
            annotation = present[0]
    if typing.get_origin(annotation) is Annotated:
        annotation, *extra = typing.get_args(annotation)
        metadata = tuple(extra)
    choices = None
    plain = [a for a in typing.get_args(annotation) if a is not type(None)]
    literal = annotation if typing.get_origin(annotation) is Literal else next(
        (a for a in plain if typing.get_origin(a) is Literal), None)
    if literal is not None:
        choices = typing.get_args(literal)
    kind = _kind(annotation)
    if (plain and len(plain) < len(typing.get_args(annotation)) and kind is not None
            and default is not None and default is not REQUIRED):  # null beside a default
        kind = (*(kind if isinstance(kind, tuple) else (kind,)), type(None))
    param = Param(name, kind, default, choices=choices)
    for item in metadata:
        if isinstance(item, Bounds):
            param = replace(param, bounds=(item.low, item.high))
        elif isinstance(item, Check):
            param = replace(param, check=item.function)
        elif isinstance(item, Component):
            param = replace(param, kind=None, component=item.category, mapping=item.mapping,
                            sequence=item.sequence)
    return param


def _same(one: Any, other: Any) -> bool:
    """Defaults alike, a list and a tuple (a dict and a read-only mapping) of equal items
    alike, each leaf's type kept (``1`` is not ``1.0`` nor ``True``)."""
    if isinstance(one, Mapping) and isinstance(other, Mapping):
        return one.keys() == other.keys() and all(_same(one[k], other[k]) for k in one)
    if isinstance(one, list | tuple) and isinstance(other, list | tuple):
        return len(one) == len(other) and all(map(_same, one, other))
    return type(one) is type(other) and one == other


def builder_params(where: str, builder: Callable[..., Any], declared: Sequence[Param],
                   context: tuple[str, ...]) -> tuple[Param, ...]:
    """The parameters a config may give ``builder``: its signature's (but the ``context``
    names), each completed by the ``declared`` Param of its name; an open-ended builder
    (``**params``) takes the declared ones after them."""
    target = builder.__init__ if isinstance(builder, type) else builder
    hints = typing.get_type_hints(target, include_extras=True)
    extra = {param.name: param for param in declared}
    params = []
    open_ended = False
    for part in inspect.signature(builder).parameters.values():
        if part.kind is part.VAR_KEYWORD:
            open_ended = True
        if part.name in context or part.kind in (part.VAR_KEYWORD, part.VAR_POSITIONAL):
            continue
        default = REQUIRED if part.default is part.empty else part.default
        param = from_signature(part.name, hints.get(part.name, Any), default)
        given = extra.pop(part.name, None)
        if given is not None:
            if given.default is not REQUIRED and not _same(given.default, default):
                raise ValueError(f"{where}: {part.name} defaults to {given.default!r} here, to "
                                 f"{default!r} in its builder: give it once, in the builder")
            nested = given.component is not None or given.fields is not None
            param = replace(given, kind=given.kind if nested else given.kind or param.kind,
                            default=default,
                            choices=given.choices or param.choices,
                            bounds=given.bounds or param.bounds,
                            check=given.check or param.check,
                            component=given.component or param.component,
                            mapping=given.mapping or param.mapping,
                            sequence=given.sequence or param.sequence)
        params.append(param)
    if extra and not open_ended:
        raise ValueError(f"{where}: {', '.join(extra)} not parameters of its builder")
    return (*params, *extra.values())


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


# the nested components most builders take
TokenEmbedders = Annotated[dict[str, Spec], Component("token_embedder", mapping=True)]
TokenIndexers = Annotated[dict[str, Spec], Component("token_indexer", mapping=True)]
Encoder = Annotated[Spec, Component("seq2seq_encoder")]

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
    params: list[Param] | tuple[Param, ...] = (),
    context: tuple[str, ...] = (),
    check: Callable[[dict[str, Any]], str | None] | None = None,
    external_files: ExternalFiles | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``builder`` under ``category``/``name``: its parameters are its signature's
    (``builder_params``; ``params`` adds what it cannot say); ``context``: what the builder
    receives from its owner rather than from the config; ``check`` names a problem among the
    values together (e.g. two ways to give one thing); ``external_files``: the files it reads
    besides its config (``config/external.py``)."""

    def decorate(builder: Callable[..., Any]) -> Callable[..., Any]:
        entries = _REGISTRY.setdefault(category, {})
        if name in entries and entries[name].builder is not builder:
            raise ValueError(f"{category} {name!r} is registered twice")
        where = f"{category} {name!r}"
        entries[name] = Entry(category, name, builder,
                              builder_params(where, builder, params, context), context, check,
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
