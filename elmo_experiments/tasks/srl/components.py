"""SRL's components: the srl_conll2005 and srl_conll2012 readers, the srl_tagger model, the
srl_eval metric, and its official scorer (``elmo-exp score srl``). The framework imports this
module for every task folder.
"""

from __future__ import annotations

import click

from elmo_experiments.config.registry import register
from elmo_experiments.tasks.srl import metric, model, reader, serving  # noqa: F401  (registered)


@click.command("srl")
@click.argument("gold", type=click.Path(dir_okay=False))
@click.argument("predicted", type=click.Path(dir_okay=False))
def score_srl(gold: str, predicted: str) -> None:
    """Print the report srl-eval.pl prints for the props file PREDICTED against GOLD, counted
    exactly as it counts (V apart, not in Overall; C-X joined to its X).

    Both are CoNLL-2005 props files (.gz too): target verbs in the first column, then one
    Start-End column per predicate, a blank line after each sentence. They must have the same
    sentences, tokens and first column.
    """
    click.echo(metric.format_report(metric.score_files(gold, predicted)), nl=False)


@register("scorer", "srl")
def scorer() -> click.Command:
    """``elmo-exp score srl``."""
    return score_srl
