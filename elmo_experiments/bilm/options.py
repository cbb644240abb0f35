"""``options.json`` of a biLM in the released layout."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elmo_experiments.errors import DataError


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
        try:
            lstm, cnn = data["lstm"], data["char_cnn"]
            options = cls(
                cell_dim=int(lstm["dim"]),
                projection_dim=int(lstm["projection_dim"]),
                n_layers=int(lstm.get("n_layers", 2)),
                cell_clip=lstm.get("cell_clip"),
                proj_clip=lstm.get("proj_clip"),
                use_skip_connections=bool(lstm.get("use_skip_connections", True)),
                char_embedding_dim=int(cnn["embedding"]["dim"]),
                filters=tuple((int(w), int(n)) for w, n in cnn["filters"]),
                n_highway=int(cnn["n_highway"]),
                n_characters=262,  # 261 at training time; 262 (with padding) at inference
                max_characters_per_token=int(cnn.get("max_characters_per_token", 50)),
                activation=cnn.get("activation", "relu"),
            )
        except KeyError as error:
            raise DataError(f"{source}: missing key {error.args[0]!r}") from None
        except (TypeError, ValueError) as error:
            raise DataError(f"{source}: malformed options ({error})") from None
        options.check(source)
        return options

    def check(self, source: str) -> None:
        if self.activation not in ("relu", "tanh"):
            raise DataError(f"{source}: char_cnn.activation {self.activation!r} is not relu/tanh")
        if self.max_characters_per_token != 50:
            raise DataError(f"{source}: max_characters_per_token must be 50")

    @classmethod
    def load(cls, path: str | Path) -> BilmOptions:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(f"{path}: no such options file") from None
        except json.JSONDecodeError as error:
            raise DataError(f"{path}:{error.lineno}: invalid JSON ({error.msg})") from None
        return cls.from_dict(data, str(path))

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
