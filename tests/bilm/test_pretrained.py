"""Shipped biLMs: found by name, checked against their SHA-256 sums and the digests the package
pins, errors in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elmo_experiments.bilm import pretrained
from elmo_experiments.bilm.pretrained import folder_digests, resolve_weights, write_checksums
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
    monkeypatch.setattr(pretrained, "SHIPPED_SHA256", {"demo": folder_digests(root / "demo")})
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


def test_a_damaged_file_is_refused_without_its_listing(shipped_root: Path) -> None:
    (shipped_root / "demo" / "SHA256SUMS").unlink()
    weights = shipped_root / "demo" / "weights.hdf5"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1
    weights.write_bytes(bytes(data))
    for spec in ("demo", str(shipped_root / "demo")):  # by name or by its folder
        with pytest.raises(DataError, match=r"^\S+/demo/weights\.hdf5: SHA-256 differs from the "
                           r"digest pinned in shipped_digests\.py \(damaged or replaced file; "
                           r"reinstall the package\)$"):
            resolve_weights(spec)


def test_a_listing_rewritten_to_match_a_replaced_file_is_refused(shipped_root: Path) -> None:
    (shipped_root / "demo" / "options.json").write_text("{}\n")
    write_checksums(shipped_root / "demo")
    with pytest.raises(DataError, match=r"options\.json: SHA-256 differs from the digest pinned"):
        resolve_weights("demo")


def test_a_shipped_biLM_without_a_pin_is_refused(shipped_root: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pretrained, "SHIPPED_SHA256", {})
    with pytest.raises(DataError, match=r"/demo: the package pins no SHA-256 for the shipped "
                       r"biLM 'demo' \(in \S+shipped_digests\.py; reproduction/bilm/ship\.py"):
        resolve_weights("demo")


def test_a_missing_listed_file_is_refused(shipped_root: Path) -> None:
    (shipped_root / "demo" / "options.json").rename(shipped_root / "demo" / "o.json")
    with pytest.raises(DataError, match=r"lacks options\.json"):
        resolve_weights(str(shipped_root / "demo"))
    (shipped_root / "demo" / "o.json").rename(shipped_root / "demo" / "options.json")
    (shipped_root / "demo" / "MODEL_CARD.md").unlink()
    with pytest.raises(DataError, match=r"SHA256SUMS:\d+: MODEL_CARD\.md is missing"):
        resolve_weights(str(shipped_root / "demo"))


def test_a_missing_pinned_file_is_refused_without_the_listing(
        shipped_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (shipped_root / "demo" / "SHA256SUMS").unlink()
    monkeypatch.setitem(pretrained.SHIPPED_SHA256["demo"], "vocab.txt", "0" * 64)
    with pytest.raises(DataError, match=r"demo/vocab\.txt: missing from the shipped biLM "
                       r"'demo'; reinstall the package$"):
        resolve_weights("demo")


def test_unknown_names_list_the_shipped_ones(shipped_root: Path) -> None:
    with pytest.raises(DataError, match=r"known name \(demo, 5\.5B, medium"):
        resolve_weights("nonesuch")
