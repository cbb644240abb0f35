"""Deprecated: the activation cache moved to
``elmo_experiments.modules.embedders.activation_cache`` (it serves the ``elmo`` and
``transformer`` embedders alike); this path goes in the next release."""

from __future__ import annotations

import warnings

from elmo_experiments.modules.embedders.activation_cache import (
    ACTIVATION_CACHE_ENV,
    CACHE_PARAMS,
    DIGEST_SIZE,
    ENTRY_MARK,
    STORED_TYPES,
    ActivationCache,
    configured_cache,
    entry_array,
    entry_bytes,
    read_through,
    state_digest,
)

__all__ = ["ACTIVATION_CACHE_ENV", "CACHE_PARAMS", "DIGEST_SIZE", "ENTRY_MARK", "STORED_TYPES",
           "ActivationCache", "configured_cache", "entry_array", "entry_bytes", "read_through",
           "state_digest"]

warnings.warn("elmo_experiments.bilm.activation_cache is deprecated: import from "
              "elmo_experiments.modules.embedders.activation_cache", DeprecationWarning,
              stacklevel=2)
