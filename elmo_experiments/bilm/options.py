"""``options.json`` of a biLM in the released layout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import parse_json
from elmo_experiments.errors import DataError

_REQUIRED = object()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Getter:
    """Reads dotted keys of a released ``options.json`` with strict types."""

    def __init__(self, data: Any, source: str) -> None:
        if not isinstance(data, dict):
            raise DataError(f"{source}: expected a JSON object, got {type(data).__name__}")
        self.data, self.source = data, source

    def __call__(self, dotted: str, kind: type, default: Any = _REQUIRED) -> Any:
        node: Any = self.data
        *parents, key = dotted.split(".")
        for depth, part in enumerate(parents):
            where = ".".join(parents[: depth + 1])
            if part not in node:
                raise DataError(f"{self.source}: missing key {where!r}")
            node = node[part]
            if not isinstance(node, dict):
                raise DataError(f"{self.source}: {where} must be an object")
        if key not in node:
            if default is _REQUIRED:
                raise DataError(f"{self.source}: missing key {dotted!r}")
            return default
        value = node[key]
        if value is None and default is None:
            return None
        ok = {int: _is_int(value), bool: isinstance(value, bool),
              float: _is_int(value) or isinstance(value, float),
              str: isinstance(value, str), list: isinstance(value, list)}[kind]
        if not ok:
            raise DataError(f"{self.source}: {dotted} must be {kind.__name__}, got {value!r}")
        return float(value) if kind is float else value


@dataclass(frozen=True)
class BilmOptions:
    """Architecture of a biLM: char CNN + highway + projection, then LSTMs with projection."""

    cell_dim: int
    projection_dim: int
    n_layers: int = 2
    cell_clip: float | None = 3.0
    proj_clip: float | None = 3.0
    use_skip_connections: bool = True
    char_embedding_dim: int = 16
    filters: tuple[tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256),
                                            (6, 512), (7, 1024))
    n_highway: int = 2
    n_characters: int = 262
    max_characters_per_token: int = 50
    activation: str = "relu"

    @property
    def num_filters(self) -> int:
        return sum(count for _, count in self.filters)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "options.json") -> BilmOptions:
        """Options from the released layout; every value is checked for its type (a string
        ``"false"`` is not a boolean, 2.5 is not a layer count), naming its key."""
        get = _Getter(data, source)
        get("lstm.dim", int)  # the lstm section first: its absence is the first error
        filters = get("char_cnn.filters", list)
        if not all(isinstance(f, list) and len(f) == 2 and all(_is_int(v) and v > 0 for v in f)
                   for f in filters) or not filters:
            raise DataError(f"{source}: char_cnn.filters must be a list of [width, count] "
                            f"pairs of positive integers, got {filters!r}")
        options = cls(
            cell_dim=get("lstm.dim", int),
            projection_dim=get("lstm.projection_dim", int),
            n_layers=get("lstm.n_layers", int, 2),
            cell_clip=get("lstm.cell_clip", float, None),
            proj_clip=get("lstm.proj_clip", float, None),
            use_skip_connections=get("lstm.use_skip_connections", bool, True),
            char_embedding_dim=get("char_cnn.embedding.dim", int),
            filters=tuple((w, n) for w, n in filters),
            n_highway=get("char_cnn.n_highway", int),
            n_characters=262,  # 261 at training time; 262 (with padding) at inference
            max_characters_per_token=get("char_cnn.max_characters_per_token", int, 50),
            activation=get("char_cnn.activation", str, "relu"),
        )
        options.check(source)
        return options

    def check(self, source: str) -> None:
        for key, value in (("lstm.dim", self.cell_dim), ("lstm.projection_dim",
                           self.projection_dim), ("lstm.n_layers", self.n_layers),
                           ("char_cnn.embedding.dim", self.char_embedding_dim)):
            if value < 1:
                raise DataError(f"{source}: {key} must be at least 1, got {value}")
        for key, clip in (("lstm.cell_clip", self.cell_clip), ("lstm.proj_clip", self.proj_clip)):
            if clip is not None and not clip > 0:
                raise DataError(f"{source}: {key} must be above 0 or null, got {clip}")
        if self.n_highway < 0:
            raise DataError(f"{source}: char_cnn.n_highway must not be negative")
        if self.activation not in ("relu", "tanh"):
            raise DataError(f"{source}: char_cnn.activation {self.activation!r} is not relu/tanh")
        if self.max_characters_per_token != 50:
            raise DataError(f"{source}: max_characters_per_token must be 50")

    @classmethod
    def load(cls, path: str | Path) -> BilmOptions:
        """The options of ``path``; a file that is missing, not UTF-8 or not JSON is a
        one-line ``DataError`` naming it (and the line)."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise DataError(f"{path}: no such options file") from None
        return cls.from_dict(parse_json(raw, path), str(path))

    def to_dict(self) -> dict[str, Any]:
        return {
            "lstm": {"dim": self.cell_dim, "projection_dim": self.projection_dim,
                     "n_layers": self.n_layers, "cell_clip": self.cell_clip,
                     "proj_clip": self.proj_clip,
                     "use_skip_connections": self.use_skip_connections},
            "char_cnn": {"embedding": {"dim": self.char_embedding_dim},
                         "filters": [list(f) for f in self.filters],
                         "n_highway": self.n_highway, "n_characters": self.n_characters,
                         "max_characters_per_token": self.max_characters_per_token,
                         "activation": self.activation},
        }
