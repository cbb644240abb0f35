"""biLM files as users have them: released names in a folder, AllenNLP's two file params, or
a released name downloaded (from a local server) into the cache and checked at every load."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from fixture_models import TINY
from http_files import Server

from elmo_experiments.bilm import pretrained
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.pretrained import KNOWN, resolve_bilm, resolve_weights
from elmo_experiments.bilm.weights import write_random_weights
from elmo_experiments.config.validate import Validator
from elmo_experiments.errors import DataError

RELEASED = "elmo_2x1024_128_2048cnn_1xhighway"


@pytest.fixture
def released_folder(tmp_path: Path, tiny_bilm_dir: Path) -> Path:
    """The tiny biLM's two files under the names the released files have."""
    folder = tmp_path / "downloaded"
    folder.mkdir()
    shutil.copy(tiny_bilm_dir / "options.json", folder / f"{RELEASED}_options.json")
    shutil.copy(tiny_bilm_dir / "weights.hdf5", folder / f"{RELEASED}_weights.hdf5")
    return folder


def _embedder_problems(**params: object) -> list[str]:
    import elmo_experiments.components  # noqa: F401

    validator = Validator()
    validator.component({"type": "elmo", **params}, "token_embedder", "model.elmo")
    return validator.problems


def _layers(**source: str) -> torch.Tensor:
    from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder

    embedder = ElmoTokenEmbedder(mixes=[{}], dropout=0.0, cache={"enabled": False},
                                 **{"weights": None, **source})
    with torch.no_grad():
        return embedder(batch_to_ids([["The", "cat"], ["A"]])).input


def test_a_folder_of_released_names_resolves(released_folder: Path) -> None:
    options, weights = resolve_weights(str(released_folder))
    assert options.name == f"{RELEASED}_options.json"
    assert weights.name == f"{RELEASED}_weights.hdf5"


def test_released_names_give_the_same_layers(released_folder: Path, tiny_bilm_dir: Path) -> None:
    torch.manual_seed(0)
    reference = _layers(weights=str(tiny_bilm_dir))
    torch.manual_seed(0)
    assert torch.equal(_layers(weights=str(released_folder)), reference)
    torch.manual_seed(0)
    named = _layers(options_file=str(released_folder / f"{RELEASED}_options.json"),
                    weight_file=str(released_folder / f"{RELEASED}_weights.hdf5"))
    assert torch.equal(named, reference)


def test_two_option_files_are_ambiguous(released_folder: Path) -> None:
    shutil.copy(released_folder / f"{RELEASED}_options.json", released_folder / "b_options.json")
    with pytest.raises(DataError, match=r"holds several \*options.json .*b_options.json"):
        resolve_weights(str(released_folder))


def test_a_folder_without_weights_names_what_it_lacks(released_folder: Path) -> None:
    (released_folder / f"{RELEASED}_weights.hdf5").unlink()
    with pytest.raises(DataError, match=r"lacks weights.hdf5 \(or any \*weights.hdf5\)"):
        resolve_weights(str(released_folder))


def test_a_known_name_uses_the_released_names_in_the_cache(
        tmp_path: Path, released_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(released_folder, tmp_path / "cache" / "small")
    assert KNOWN["small"].stem == RELEASED
    options, weights = resolve_weights("small")  # no download: both files are there
    assert options == tmp_path / "cache" / "small" / f"{RELEASED}_options.json"
    assert weights == tmp_path / "cache" / "small" / f"{RELEASED}_weights.hdf5"


def test_the_allennlp_pair_validates(released_folder: Path) -> None:
    assert _embedder_problems(options_file=str(released_folder / f"{RELEASED}_options.json"),
                              weight_file=str(released_folder / f"{RELEASED}_weights.hdf5")) == []


def test_validation_names_every_source_problem(released_folder: Path, tmp_path: Path) -> None:
    assert _embedder_problems() == [
        "model.elmo: biLM weights missing: give weights (a directory or a known name) or both "
        "options_file and weight_file"]
    assert _embedder_problems(weights=str(released_folder),
                              options_file=str(released_folder / f"{RELEASED}_options.json")
                              ) == ["model.elmo: give weights or options_file + weight_file, "
                                    "not both"]
    missing = str(tmp_path / "nothing.hdf5")
    assert _embedder_problems(options_file=str(released_folder / f"{RELEASED}_options.json"),
                              weight_file=missing) == [
        f"model.elmo.weight_file: {missing}: no such file"]


def test_resolve_bilm_refuses_half_a_pair(released_folder: Path) -> None:
    with pytest.raises(DataError, match="give weights"):
        resolve_bilm(options_file=str(released_folder / f"{RELEASED}_options.json"))


# ----------------------------------------------------------------- released names, downloaded


@pytest.fixture
def release(tiny_bilm_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[Server]:
    """``small`` served by a local server (the tiny biLM's files at the released addresses),
    and an empty cache."""
    folder = f"/{KNOWN['small'].folder}/{RELEASED}"
    server = Server({f"{folder}_options.json": (tiny_bilm_dir / "options.json").read_bytes(),
                     f"{folder}_weights.hdf5": (tiny_bilm_dir / "weights.hdf5").read_bytes()})
    monkeypatch.setattr(pretrained, "_BASE", server.url)
    monkeypatch.setattr(pretrained, "_verified", set())
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))
    yield server
    server.close()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_released_name_is_downloaded_recorded_and_checked_at_every_load(
        release: Server, tmp_path: Path, tiny_bilm_dir: Path) -> None:
    folder = tmp_path / "cache" / "small"
    options, weights = resolve_weights("small")
    assert (options, weights) == (folder / f"{RELEASED}_options.json",
                                  folder / f"{RELEASED}_weights.hdf5")
    assert weights.read_bytes() == (tiny_bilm_dir / "weights.hdf5").read_bytes()
    assert (folder / "SHA256SUMS").read_text() == (f"{sha256(options)}  {options.name}\n"
                                                  f"{sha256(weights)}  {weights.name}\n")
    asked = len(release.requests)
    assert resolve_weights("small") == (options, weights)
    assert len(release.requests) == asked  # no second download
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1  # a flipped bit, layout intact
    weights.write_bytes(bytes(data))
    with pytest.raises(DataError, match=rf"^{weights}: SHA-256 differs from \S+SHA256SUMS "
                       r"\(damaged or replaced file; delete it to download it again\)$"):
        resolve_weights("small")
    weights.unlink()
    assert resolve_weights("small") == (options, weights)  # downloaded again, recorded again
    assert sha256(weights) == sha256(tiny_bilm_dir / "weights.hdf5")


def test_an_interrupted_release_download_resumes(release: Server, tmp_path: Path,
                                                 tiny_bilm_dir: Path) -> None:
    weights_path = f"/{KNOWN['small'].folder}/{RELEASED}_weights.hdf5"
    release.cut, release.cut_path = 10_000, weights_path
    with pytest.raises(DataError, match=r"(interrupted|ended early).* again to resume from "
                       r"\S+_weights\.hdf5\.part"):
        resolve_weights("small")
    release.cut = None
    _, weights = resolve_weights("small")
    assert (weights_path, "bytes=10000-") in release.requests
    assert weights.read_bytes() == (tiny_bilm_dir / "weights.hdf5").read_bytes()
    assert not list((tmp_path / "cache").rglob("*.part"))


def test_a_published_digest_is_checked(release: Server, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KNOWN, "small", dataclasses.replace(KNOWN["small"],
                                                            weights_sha256="0" * 64))
    with pytest.raises(DataError, match=r"_weights\.hdf5: SHA-256 \w+ differs from the "
                       r"expected 0{64}; the download was deleted"):
        resolve_weights("small")
    assert not list((tmp_path / "cache" / "small").glob("*weights*"))


def test_weights_that_do_not_fit_the_options_are_refused_before_use(
        release: Server, tmp_path: Path) -> None:
    other = write_random_weights(tmp_path / "other", BilmOptions(**{
        **dataclasses.asdict(TINY), "projection_dim": 6}))
    release.files[f"/{KNOWN['small'].folder}/{RELEASED}_weights.hdf5"] = \
        (other / "weights.hdf5").read_bytes()
    with pytest.raises(DataError, match=rf"^{tmp_path / 'cache' / 'small'}/{RELEASED}_weights"
                       r"\.hdf5: dataset \S+ has shape \([\d, ]+\), expected \([\d, ]+\) "
                       r"from options\.json$"):
        resolve_weights("small")
    assert not (tmp_path / "cache" / "small" / "SHA256SUMS").exists()  # never trusted
