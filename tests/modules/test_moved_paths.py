"""The embedders' shared pieces moved out of ``bilm/``: the old import paths still work for one
release, with a ``DeprecationWarning``."""

from __future__ import annotations

import importlib
import sys

import pytest

from elmo_experiments.modules.embedders import activation_cache, scalar_mix

MOVED = [("elmo_experiments.bilm.scalar_mix", scalar_mix, "ScalarMix"),
         ("elmo_experiments.bilm.activation_cache", activation_cache, "ActivationCache")]


@pytest.mark.parametrize(("old", "new", "name"), MOVED)
def test_the_old_path_warns_and_gives_the_same_objects(old: str, new: object, name: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match="modules.embedders"):
        module = importlib.import_module(old)
    for exported in module.__all__:
        assert getattr(module, exported) is getattr(new, exported)
    assert getattr(module, name) is getattr(new, name)
