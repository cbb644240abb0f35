"""Deprecated: the scalar mix moved to ``elmo_experiments.modules.embedders.scalar_mix`` (it
serves the ``elmo`` and ``transformer`` embedders alike); this path goes in the next release."""

from __future__ import annotations

import warnings

from elmo_experiments.modules.embedders.scalar_mix import (
    MIX_MODES,
    MIX_PARAMS,
    ONE_MIX,
    ScalarMix,
    masked_layer_norm,
    mixes_report,
)

__all__ = ["MIX_MODES", "MIX_PARAMS", "ONE_MIX", "ScalarMix", "masked_layer_norm",
           "mixes_report"]

warnings.warn("elmo_experiments.bilm.scalar_mix is deprecated: import from "
              "elmo_experiments.modules.embedders.scalar_mix", DeprecationWarning, stacklevel=2)
