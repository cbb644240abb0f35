"""The biLM shipped inside the package (``weights: 'gutenberg'``): its files are whole, it loads
offline, every ELMo config defaults to it, a wheel carries it, and its card's figures hold."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from elmo_experiments.bilm import pretrained
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.config.loader import PROJECT_ROOT, load_config
from elmo_experiments.errors import DataError

FOLDER = pretrained.SHIPPED_ROOT / "gutenberg"
FILES = {"options.json", "weights.hdf5", "softmax.hdf5", "vocab.txt", "training.json",
         "MODEL_CARD.md", "SHA256SUMS"}
LIMIT_BYTES = 40_000_000


def test_the_folder_holds_the_biLM_its_card_and_sums_within_40_MB() -> None:
    assert {p.name for p in FOLDER.iterdir()} == FILES
    assert sum(p.stat().st_size for p in FOLDER.iterdir()) <= LIMIT_BYTES
    listed = {line.split()[1] for line in (FOLDER / "SHA256SUMS").read_text().splitlines()}
    assert listed == FILES - {"SHA256SUMS"}
    with h5py.File(FOLDER / "weights.hdf5", "r") as handle:  # stored in half precision
        assert handle["char_embed"].dtype == np.float16


def test_the_name_resolves_offline_with_its_sums_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setattr(pretrained, "_download", _no_network)
    monkeypatch.setattr(pretrained, "_verified", set())  # check every file now
    assert pretrained.resolve_weights("gutenberg") == (FOLDER / "options.json",
                                                       FOLDER / "weights.hdf5")


def test_the_package_pins_the_files_sha256() -> None:
    """Shipping a biLM anew (reproduction/bilm/ship.py) must update the pin in
    shipped_digests.py."""
    assert set(pretrained.SHIPPED_SHA256) >= set(pretrained.shipped())
    assert pretrained.SHIPPED_SHA256["gutenberg"] == pretrained.folder_digests(FOLDER)
    assert set(pretrained.SHIPPED_SHA256["gutenberg"]) == FILES - {"SHA256SUMS"}
    assert pretrained.PINS_FILE.read_text() == pretrained.render_pins(pretrained.SHIPPED_SHA256)


def test_a_flipped_bit_is_refused_with_the_listing_deleted(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "models" / "gutenberg"
    shutil.copytree(FOLDER, copy)
    (copy / "SHA256SUMS").unlink()
    data = bytearray((copy / "weights.hdf5").read_bytes())
    data[len(data) // 2] ^= 0x01
    (copy / "weights.hdf5").write_bytes(bytes(data))
    monkeypatch.setattr(pretrained, "SHIPPED_ROOT", copy.parent)
    monkeypatch.setattr(pretrained, "_verified", set())
    with pytest.raises(DataError, match=r"gutenberg/weights\.hdf5: SHA-256 differs from the "
                       r"digest pinned in shipped_digests\.py"):
        pretrained.resolve_weights("gutenberg")


def _no_network(*args: object, **kwargs: object) -> None:
    raise AssertionError("a shipped biLM must not be downloaded")


def test_it_embeds_a_sentence_as_its_training_record_describes() -> None:
    options = json.loads((FOLDER / "options.json").read_text())
    bilm = load_bilm(*pretrained.resolve_weights("gutenberg"))
    with torch.no_grad():
        layers, mask, _ = bilm(batch_to_ids([["It", "was", "a", "dark", "night", "."]]))
    width = 2 * options["lstm"]["projection_dim"]
    assert [tuple(layer.shape) for layer in layers] == [(1, 6, width)] * 3
    assert all(layer.dtype == torch.float32 and torch.isfinite(layer).all() for layer in layers)
    assert mask.all()


def test_every_elmo_config_defaults_to_the_shipped_biLM(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_WEIGHTS", raising=False)
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    found = 0
    for path in sorted((PROJECT_ROOT / "experiments").glob("*.jsonnet")):
        embedders = load_config(path).get("model", {}).get("token_embedders", {})
        for embedder in embedders.values():
            if embedder.get("type") == "elmo":
                assert embedder["weights"] == "gutenberg", path
                found += 1
    assert found >= 6  # the six tasks' ELMo configs


@pytest.mark.slow
def test_a_wheel_carries_the_biLM(tmp_path: Path) -> None:
    """A non-editable install gets the files: they are in the wheel, whole."""
    pytest.importorskip("setuptools", reason="building the wheel here needs setuptools")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(tmp_path), str(PROJECT_ROOT)], check=True,
                   timeout=600, capture_output=True)
    (wheel,) = tmp_path.glob("elmo_experiments-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in FILES:
            stored = archive.read(f"elmo_experiments/bilm/models/gutenberg/{name}")
            assert stored == (FOLDER / name).read_bytes(), name


LITBANK = Path(os.environ.get("ELMO_DATA_DIR", "/nonexistent")) / "coref_litbank" / "conll"


@pytest.mark.slow
@pytest.mark.skipif(not LITBANK.is_dir(), reason="needs LitBank in $ELMO_DATA_DIR/coref_litbank")
def test_the_cards_litbank_perplexity_is_reproduced() -> None:
    """``elmo-exp perplexity gutenberg DATA/coref_litbank/conll --format conll2012`` gives the
    figures of the model card (text never trained on)."""
    from elmo_experiments.bilm.pretraining.perplexity import perplexity

    record = json.loads((FOLDER / "training.json").read_text())["perplexity"]["litbank"]
    measured = perplexity("gutenberg", str(LITBANK), "conll2012", progress=False)
    assert measured["tokens"] == record["float16"]["tokens"]
    for key in ("perplexity", "perplexity_forward", "perplexity_backward"):
        assert measured[key] == pytest.approx(record["float16"][key], rel=1e-5)
    card = (FOLDER / "MODEL_CARD.md").read_text()
    assert f"**{measured['perplexity']:.2f}**" in card


def test_the_readmes_quote_the_cards_perplexities() -> None:
    record = json.loads((FOLDER / "training.json").read_text())["perplexity"]
    figures = [f"{record[split]['float16']['perplexity']:.2f}" for split in ("heldout", "litbank")]
    for page in (PROJECT_ROOT / "README.md", PROJECT_ROOT / "reproduction/bilm/README.md"):
        text = " ".join(page.read_text().split())
        assert all(f in text for f in figures), (page, figures)
