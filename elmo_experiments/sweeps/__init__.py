"""Grids of ordinary runs: a spec's cells (variants x seeds x data fractions), run through
submitit, resumed, summarised."""
