"""Coreference's components: the coref_conll2012 reader, the coref model, the conll_coref metric,
and its official scorer (``elmo-exp score coref``). The framework imports this module for every
task folder.
"""

from __future__ import annotations

import click

from elmo_experiments.config.registry import register
from elmo_experiments.tasks.coref import metric, model, reader, serving  # noqa: F401  (registered)


@click.command("coref")
@click.argument("key", type=click.Path(dir_okay=False))
@click.argument("response", type=click.Path(dir_okay=False))
def score_coref(key: str, response: str) -> None:
    """Print the CoNLL-2012 scorer's (scorer.pl v8.01) MUC, B-cubed and CEAF-e totals for the
    RESPONSE file against KEY, and the CoNLL F1 (their mean).

    Both are CoNLL-2012 files (.gz too): '#begin document' blocks, one line per token, the
    coreference column last. They must have the same documents (names and parts) and token
    counts. Repeated response mentions are removed as scorer.pl removes them (more than 10: an
    error, as scorer.pl refuses to score).
    """
    click.echo(metric.format_report(metric.score_files(key, response)), nl=False)


@register("scorer", "coref")
def scorer() -> click.Command:
    """``elmo-exp score coref``."""
    return score_coref
