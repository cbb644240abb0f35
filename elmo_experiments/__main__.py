"""``python -m elmo_experiments`` runs the ``elmo-exp`` command line."""

from elmo_experiments.cli import main

main()
