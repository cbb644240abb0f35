"""Shipped biLMs: found by name, checked against their SHA-256 sums, errors in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elmo_experiments.bilm import pretrained
from elmo_experiments.bilm.pretrained import resolve_weights, write_checksums
from elmo_experiments.errors import DataError


@pytest.fixture
def shipped_root(tmp_path: Path, tiny_bilm_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package models folder holding one shipped biLM, ``demo`` (the tiny random one)."""
    root = tmp_path / "models"
    shutil.copytree(tiny_bilm_dir, root / "demo")
    (root / "demo" / "MODEL_CARD.md").write_text("# demo\n")
    write_checksums(root / "demo")
    (root / "no_card").mkdir()  # not a shipped biLM: no model card
    monkeypatch.setattr(pretrained, "SHIPPED_ROOT", root)
    monkeypatch.setattr(pretrained, "_verified", set())
    return root


def test_a_shipped_name_resolves_to_its_folder_offline(shipped_root: Path) -> None:
    assert list(pretrained.shipped()) == ["demo"]
    options, weights = resolve_weights("demo")
    assert options == shipped_root / "demo" / "options.json"
    assert weights == shipped_root / "demo" / "weights.hdf5"


def test_a_damaged_file_is_refused(shipped_root: Path) -> None:
    weights = shipped_root / "demo" / "weights.hdf5"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(DataError, match="SHA-256 differs"):
        resolve_weights("demo")


def test_a_missing_listed_file_is_refused(shipped_root: Path) -> None:
    (shipped_root / "demo" / "options.json").rename(shipped_root / "demo" / "o.json")
    with pytest.raises(DataError, match=r"lacks options\.json"):
        resolve_weights(str(shipped_root / "demo"))
    (shipped_root / "demo" / "o.json").rename(shipped_root / "demo" / "options.json")
    (shipped_root / "demo" / "MODEL_CARD.md").unlink()
    with pytest.raises(DataError, match=r"SHA256SUMS:\d+: MODEL_CARD\.md is missing"):
        resolve_weights(str(shipped_root / "demo"))


def test_unknown_names_list_the_shipped_ones(shipped_root: Path) -> None:
    with pytest.raises(DataError, match=r"known name \(demo, 5\.5B, medium"):
        resolve_weights("nonesuch")
