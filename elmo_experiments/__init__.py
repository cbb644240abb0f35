"""elmo-experiments: contextual word representations (ELMo) and the task models that use them.

The Python API (``Elmo``, ``ElmoEmbedder``, ``batch_to_ids``, ``load_archive``, ``Predictor``)
is imported on first use, so that ``import elmo_experiments`` stays light.
"""

from __future__ import annotations

from typing import Any

from elmo_experiments.version import __version__ as __version__

__all__ = ["Elmo", "ElmoEmbedder", "Predictor", "batch_to_ids", "load_archive"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from elmo_experiments import api

        return getattr(api, name)
    raise AttributeError(f"module 'elmo_experiments' has no attribute {name!r}")
