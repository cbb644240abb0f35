"""SQuAD's components: the squad reader, the bidaf model, the squad metric, and its official scorer
(``elmo-exp score squad``). The framework imports this module for every task folder.
"""

from __future__ import annotations

import json

import click

from elmo_experiments.config.registry import register
from elmo_experiments.tasks.squad import metric, model, reader, serving  # noqa: F401  (registered)


@click.command("squad")
@click.argument("data", type=click.Path(dir_okay=False))
@click.argument("predictions", type=click.Path(dir_okay=False))
def score_squad(data: str, predictions: str) -> None:
    """Print SQuAD v1.1's exact match and F1 of PREDICTIONS as one JSON line, as the official
    evaluate-v1.1.py prints them.

    DATA is the SQuAD v1.1 file (.json or .json.gz); PREDICTIONS a JSON object question id ->
    answer text. A question without a prediction scores 0; ids not in DATA are ignored.
    """
    click.echo(json.dumps(metric.score_files(data, predictions)))


@register("scorer", "squad")
def scorer() -> click.Command:
    """``elmo-exp score squad``."""
    return score_squad
