"""NER's components: the conll2003 reader, the crf_tagger model, the conlleval metric, and its
official scorer (``elmo-exp score ner``). The framework imports this module for every task folder.
"""

from __future__ import annotations

import click

from elmo_experiments.config.registry import register
from elmo_experiments.tasks.ner import metric, model, reader, serving  # noqa: F401  (registered)


@click.command("ner")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--iobes", is_flag=True,
              help="read E-/S- (and BIOUL's L-/U-) tags as IOBES; conlleval.pl knows E only as "
              "IOE and has no rule for S, L or U")
def score_ner(path: str, iobes: bool) -> None:
    """Print the report conlleval.pl prints for PATH, counted exactly as it counts.

    PATH holds token lines whose last two columns are the gold and predicted tags, blank lines
    between sentences (.gz too). Without --iobes every prefix means what it means to
    conlleval.pl (so B-PER L-PER I-PER is one phrase); with it, E/S/L/U end chunks as in IOBES.
    """
    from elmo_experiments.metrics.span_f1 import conlleval_report

    click.echo(conlleval_report(path, iobes=iobes), nl=False)


@register("scorer", "ner")
def scorer() -> click.Command:
    """``elmo-exp score ner``."""
    return score_ner
