"""The registry is filled once, by the entry points (``components.load()``); a lookup before
that is a one-line error saying so, not an "unknown type" with an empty list."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from elmo_experiments.config import registry
from elmo_experiments.errors import RegistryNotFilled


def test_a_lookup_before_loading_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_FILLED", False)
    for lookup in (lambda: registry.lookup("model", "crf_tagger"),
                   lambda: registry.entries("model"), registry.categories):
        with pytest.raises(RegistryNotFilled, match=r"^the component registry is not filled yet: "
                                                    r"call elmo_experiments\.components\.load"):
            lookup()
    assert "\n" not in registry.NOT_FILLED


def test_the_python_api_fills_it_and_a_lower_module_does_not() -> None:
    """In a fresh process: importing the assembly and validating before any entry point is the
    one-line error; importing ``elmo_experiments.api`` fills the registry."""
    script = textwrap.dedent("""
        from elmo_experiments.config import registry
        from elmo_experiments.errors import RegistryNotFilled
        from elmo_experiments.experiment import validate_experiment
        from elmo_experiments.run import train  # noqa: F401  (the assembly loads nothing)

        try:
            validate_experiment({"dataset_reader": {"type": "conll2003"}})
        except RegistryNotFilled as error:
            print("refused:", error)
        import elmo_experiments.api  # noqa: F401
        print("filled:", registry.filled(), "crf_tagger" in registry.entries("model"))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: the component registry is not filled yet")
    assert lines[1] == "filled: True True"
