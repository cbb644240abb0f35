"""Tiny model definitions shared by conftest.py, the golden guard and the model checks."""

from __future__ import annotations

from elmo_experiments.bilm.options import BilmOptions

# A biLM small enough to build in milliseconds: 2P = 8 output dims, F = 8 filters.
TINY = BilmOptions(cell_dim=16, projection_dim=4, filters=((1, 4), (2, 4)), n_highway=1,
                   char_embedding_dim=4)
