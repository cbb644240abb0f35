"""GAP's components: the gap_tsv reader, the gap_pronoun model, the gap dataset metric, its
serving hooks and its official scorer (``elmo-exp score gap``). The framework imports this
module for every task folder.
"""

from __future__ import annotations

import click

from elmo_experiments.config.registry import register
from elmo_experiments.tasks.gap import metric, model, reader, serving  # noqa: F401  (registered)


@click.command("gap")
@click.argument("gold", type=click.Path(dir_okay=False))
@click.argument("system", type=click.Path(dir_okay=False))
def score_gap(gold: str, system: str) -> None:
    """Print the GAP scorer's scorecard (gap_scorer.py, Webster et al. 2018) for the SYSTEM
    answers against GOLD: recall, precision and F1 overall, for masculine and for feminine
    pronouns, and the bias F1(feminine) / F1(masculine).

    GOLD is a GAP TSV (gap-test.tsv: a header, then ID, Text, Pronoun, Pronoun-offset, A,
    A-offset, A-coref, B, B-offset, B-coref, URL). SYSTEM has no header, one line per example:
    ID, A-coref, B-coref (TRUE or FALSE), tab-separated, as `elmo-exp evaluate` writes it. An
    example SYSTEM does not answer counts as two false negatives, as in the official scorer.
    """
    click.echo(metric.format_report(metric.score_files(gold, system)), nl=False)


@register("scorer", "gap")
def scorer() -> click.Command:
    """``elmo-exp score gap``."""
    return score_gap
