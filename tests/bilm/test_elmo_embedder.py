"""The ``elmo`` token embedder built through the registry, its caches, and weight resolution."""

from __future__ import annotations

import io
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from elmo_experiments.bilm import pretrained
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder
from elmo_experiments.bilm.pretrained import KNOWN, resolve_weights
from elmo_experiments.config.validate import Validator
from elmo_experiments.contracts import mix_placements, regularization_penalty
from elmo_experiments.errors import ConfigError, DataError
from elmo_experiments.modules.embedders.activation_cache import (
    ActivationCache,
    entry_array,
    entry_bytes,
)

SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["Hello", "world"], ["One"]]
OTHERS = [["Hello", "world"], ["Something", "new", "here"]]
OUTPUT_DIM = 8  # 2P of the tiny biLM


def build(weights: Path | str, **config: Any) -> ElmoTokenEmbedder:
    validator = Validator()
    spec = validator.component({"type": "elmo", "weights": str(weights), **config},
                               "token_embedder", "model.token_embedders.elmo")
    assert validator.problems == []
    embedder = spec.build()
    assert isinstance(embedder, ElmoTokenEmbedder)
    return embedder


def problems(config: dict[str, Any]) -> list[str]:
    validator = Validator()
    validator.component({"type": "elmo", **config}, "token_embedder", "elmo")
    return validator.problems


# ----------------------------------------------------------------- building


def test_registry_defaults(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir)
    assert embedder.output_dim == OUTPUT_DIM
    assert len(embedder.mixes) == 1 and embedder.mixes.extra == 0
    mix = embedder.mixes[0]
    assert (mix.mode, mix.l2, mix.layer_norm, mix.num_layers) == ("learned", 0.0, False, 3)
    assert embedder.runner.mode == "stateless"
    assert embedder.dropout.p == 0.5
    assert embedder.cache is not None
    assert embedder.runner.bilm.char_encoder.cache_tokens


def test_registry_reports_bad_configs() -> None:
    found = problems({"weights": "x", "mixes": [{"mode": "sum"}], "state": "sticky",
                      "cache": {"enabld": True}})
    text = "\n".join(found)
    assert "elmo.mixes.0.mode: 'sum' is not one of" in text
    assert "elmo.state: 'sticky' is not one of" in text
    assert "elmo.cache.enabld: unknown parameter; did you mean enabled?" in text
    assert "elmo.mixes: expected a list of objects" in "\n".join(problems({"weights": "x",
                                                                          "mixes": {}}))
    assert "elmo: biLM weights missing: give weights (a directory or a known name) or both " \
        "options_file and weight_file" in problems({})


def test_unusable_weights_are_a_validation_problem_with_the_path(tmp_path: Path) -> None:
    """Checked without reading or downloading; building anyway still fails in one line."""
    validator = Validator()
    spec = validator.component({"type": "elmo", "weights": str(tmp_path / "nowhere")},
                               "token_embedder", "model.token_embedders.elmo")
    assert len(validator.problems) == 1
    assert validator.problems[0].startswith(
        f"model.token_embedders.elmo.weights: {tmp_path / 'nowhere'}: not a biLM directory")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "options.json").write_text("{}")
    validator = Validator()
    validator.component({"type": "elmo", "weights": str(tmp_path / "half")}, "token_embedder",
                        "elmo")
    assert validator.problems == [f"elmo.weights: {tmp_path / 'half'}: biLM directory lacks "
                                  "weights.hdf5 (or any *weights.hdf5)"]
    validator = Validator()
    validator.component({"type": "elmo", "weights": "small"}, "token_embedder", "elmo")
    assert validator.problems == []  # a released name: downloaded when built, not validated
    assert spec is not None
    with pytest.raises(DataError, match=r"nowhere: not a biLM directory"):
        spec.build()


def test_output_shape_and_padding(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, dropout=0.0).eval()
    out = embedder(batch_to_ids(SENTENCES)).input
    assert out.shape == (3, 7, OUTPUT_DIM)
    assert not out[1, 2:].any() and not out[2, 1:].any()
    assert embedder(batch_to_ids(SENTENCES)).extra == []


# ----------------------------------------------------------------- caches


def test_cache_on_and_off_agree_and_the_second_call_hits(tiny_bilm_dir: Path) -> None:
    cached = build(tiny_bilm_dir, dropout=0.0).eval()
    plain = build(tiny_bilm_dir, dropout=0.0, cache={"enabled": False}, char_cache=False).eval()
    assert plain.cache is None and not plain.runner.bilm.char_encoder.cache_tokens
    assert cached.cache is not None
    ids = batch_to_ids(SENTENCES)
    expected = plain(ids).input
    first = cached(ids).input
    assert (cached.cache.hits, cached.cache.misses) == (0, 3)
    second = cached(ids).input
    assert (cached.cache.hits, cached.cache.misses) == (3, 3)
    torch.testing.assert_close(first, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(second, expected, atol=1e-6, rtol=0)
    # a batch of one cached and one new sentence
    mixed = cached(batch_to_ids(OTHERS)).input
    assert (cached.cache.hits, cached.cache.misses) == (4, 4)
    torch.testing.assert_close(mixed, plain(batch_to_ids(OTHERS)).input, atol=1e-6, rtol=0)


def test_cached_layers_equal_the_runner(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, dropout=0.0).eval()
    ids = batch_to_ids(SENTENCES)
    layers, mask = embedder._layers(ids)
    with torch.no_grad():
        direct, direct_mask = embedder.runner.with_boundaries(ids)
    assert torch.equal(mask, direct_mask)
    for a, b in zip(layers, direct, strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)


def test_disk_cache_is_shared_between_embedders(tiny_bilm_dir: Path, tmp_path: Path) -> None:
    config = {"dropout": 0.0, "cache": {"disk_dir": str(tmp_path / "cache")}}
    first = build(tiny_bilm_dir, **config).eval()
    expected = first(batch_to_ids(SENTENCES)).input
    second = build(tiny_bilm_dir, **config).eval()
    got = second(batch_to_ids(SENTENCES)).input
    assert second.cache is not None and (second.cache.hits, second.cache.misses) == (3, 0)
    torch.testing.assert_close(got, expected, atol=0, rtol=0)


def _flip_a_value(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-40] ^= 0x10  # inside the last value, before the checksum
    path.write_bytes(bytes(data))


DAMAGE = {
    "truncated": lambda path, other: path.write_bytes(path.read_bytes()[:150]),
    "empty": lambda path, other: path.write_bytes(b""),
    "flipped": lambda path, other: _flip_a_value(path),
    "random": lambda path, other: path.write_bytes(np.random.default_rng(0).bytes(300)),
    "another sentence's": lambda path, other: path.write_bytes(other.read_bytes()),
    "shortened": lambda path, other: path.write_bytes(entry_bytes(
        path.stem, np.ones((3, 1, 8), dtype=np.float32))),  # its own key: only the shape is off
    "without a checksum": lambda path, other: np.save(path, np.ones((3, 1, 8), np.float32)),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_disk_entry_is_recomputed_with_one_warning(
        damage: str, tiny_bilm_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
        ) -> None:
    config = {"dropout": 0.0, "cache": {"disk_dir": str(tmp_path / "cache")}}
    expected = build(tiny_bilm_dir, **config).eval()(batch_to_ids(SENTENCES)).input
    entries = sorted((tmp_path / "cache").rglob("*.npy"))
    assert len(entries) == len(SENTENCES)
    DAMAGE[damage](entries[0], entries[1])
    second = build(tiny_bilm_dir, **config).eval()
    with caplog.at_level("WARNING", logger="elmo_experiments"):
        got = second(batch_to_ids(SENTENCES)).input
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)  # alone in its batch now
    assert second.cache is not None and (second.cache.hits, second.cache.misses) == (2, 1)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"{entries[0]}: damaged activation cache entry (") and "\n" not in warnings[0]
    third = build(tiny_bilm_dir, **config).eval()  # the recomputed entry was written again
    torch.testing.assert_close(third(batch_to_ids(SENTENCES)).input, got, atol=0, rtol=0)
    assert third.cache is not None and (third.cache.hits, third.cache.misses) == (3, 0)


def test_disk_entries_load_as_npy_and_carry_their_checksum(tmp_path: Path) -> None:
    cache = ActivationCache("n", disk_dir=str(tmp_path))
    value = torch.linspace(-1, 1, 24).reshape(1, 3, 8)
    cache.put("k", value)
    [path] = tmp_path.rglob("k.npy")
    assert np.array_equal(np.load(path), value.numpy())  # still an .npy file
    assert entry_array("k", path.read_bytes()).shape == (1, 3, 8)
    assert "checksum mismatch" in entry_array("other", path.read_bytes())
    fresh = ActivationCache("n", disk_dir=str(tmp_path))
    assert torch.equal(fresh.get("k", (1, 3, 8)), value)


def test_the_environment_names_a_shared_disk_cache(tiny_bilm_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """$ELMO_ACTIVATION_CACHE (set by `sweep --activation-cache`) is the disk folder of every
    embedder whose config names none; a config's own disk_dir wins."""
    monkeypatch.setenv("ELMO_ACTIVATION_CACHE", str(tmp_path / "shared"))
    first = build(tiny_bilm_dir, dropout=0.0).eval()
    expected = first(batch_to_ids(SENTENCES)).input
    assert len(list((tmp_path / "shared").rglob("*.npy"))) == len(SENTENCES)
    second = build(tiny_bilm_dir, dropout=0.0).eval()
    got = second(batch_to_ids(SENTENCES)).input
    assert second.cache is not None and (second.cache.hits, second.cache.misses) == (3, 0)
    torch.testing.assert_close(got, expected, atol=0, rtol=0)
    own = build(tiny_bilm_dir, dropout=0.0, cache={"disk_dir": str(tmp_path / "own")})
    assert own.cache is not None and own.cache.disk_root == tmp_path / "own"


def test_cache_namespaces(tiny_bilm_dir: Path, other_tiny_bilm_dir: Path, tmp_path: Path) -> None:
    def namespace(weights: Path, **config: Any) -> str:
        embedder = build(weights, **config)
        assert embedder.cache is not None and not embedder.cache.namespace  # set on first use
        embedder(batch_to_ids(SENTENCES[:1]))
        return embedder.cache.namespace

    base = namespace(tiny_bilm_dir)
    digest = base.split("|")[0]
    assert base == f"{digest}|stateless|fp32"
    assert namespace(tiny_bilm_dir) == base
    assert namespace(other_tiny_bilm_dir) != base
    assert namespace(tiny_bilm_dir, cache={"fp16": True}) == f"{digest}|stateless|fp16"
    warm = namespace(tiny_bilm_dir, state="warm")
    assert warm != base and warm.startswith(f"{digest}|warm:")
    warmup = tmp_path / "warmup.txt"
    warmup.write_text("Some other warm-up text .\n\nAnd a second line .\n", encoding="utf-8")
    assert namespace(tiny_bilm_dir, state="warm", warmup_file=str(warmup)) not in (base, warm)


def test_mixed_precision_runs_never_share_entries_with_fp32_runs(tiny_bilm_dir: Path) -> None:
    """Autocast changes the activations computed, so it is part of the namespace; fp32 keeps
    the namespace it always had (existing disk caches stay valid)."""
    def namespace(**autocast: Any) -> str:
        embedder = build(tiny_bilm_dir).eval()
        with torch.autocast("cpu", **autocast):
            embedder(batch_to_ids(SENTENCES[:1]))
        assert embedder.cache is not None
        return embedder.cache.namespace

    plain = namespace(enabled=False)
    assert plain.endswith("|stateless|fp32")
    assert namespace(dtype=torch.bfloat16) == f"{plain}|autocast-cpu-torch.bfloat16"


def test_a_bf16_bilm_caches_its_activations(tiny_bilm_dir: Path) -> None:
    """The namespace digests the weights whatever their dtype (bf16 has no numpy type)."""
    embedder = build(tiny_bilm_dir, precision="bf16", dropout=0.0).eval()
    ids = batch_to_ids(SENTENCES)
    first = embedder(ids).input
    second = embedder(ids).input
    assert embedder.cache is not None and (embedder.cache.hits, embedder.cache.misses) == (3, 3)
    torch.testing.assert_close(second, first, atol=0, rtol=0)
    fp32 = build(tiny_bilm_dir, dropout=0.0).eval()
    fp32(ids)
    assert fp32.cache is not None and fp32.cache.namespace != embedder.cache.namespace


def test_the_same_sentence_is_a_different_key_under_other_weights(
        tiny_bilm_dir: Path, other_tiny_bilm_dir: Path, tmp_path: Path) -> None:
    disk = {"dropout": 0.0, "cache": {"disk_dir": str(tmp_path / "cache")}}
    one = build(tiny_bilm_dir, **disk).eval()
    out_one = one(batch_to_ids(SENTENCES)).input
    two = build(other_tiny_bilm_dir, **disk).eval()
    out_two = two(batch_to_ids(SENTENCES)).input
    assert two.cache is not None and two.cache.hits == 0
    assert (out_one - out_two).abs().max() > 1e-3


def test_stateful_never_caches(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, state="stateful", dropout=0.0).eval()
    assert embedder.cache is None
    ids = batch_to_ids(SENTENCES)
    first, second = embedder(ids).input, embedder(ids).input
    assert (first - second).abs().max() > 1e-4  # the carried state changes the vectors


def test_warm_embedder_caches_and_matches_uncached(tiny_bilm_dir: Path) -> None:
    cached = build(tiny_bilm_dir, state="warm", dropout=0.0).eval()
    plain = build(tiny_bilm_dir, state="warm", dropout=0.0, cache={"enabled": False}).eval()
    ids = batch_to_ids(SENTENCES)
    expected = plain(ids).input
    torch.testing.assert_close(cached(ids).input, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(cached(ids).input, expected, atol=1e-6, rtol=0)
    assert cached.cache is not None and cached.cache.hits == 3


# ----------------------------------------------------------------- gradients


def test_bilm_is_frozen_and_mixes_learn(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, mixes=[{"l2": 0.1}], dropout=0.0)
    embedder.train()
    bilm = embedder.runner.bilm
    assert not any(p.requires_grad for p in bilm.parameters())
    trainable = {name for name, p in embedder.named_parameters() if p.requires_grad}
    assert trainable == {"mixes.0.scalar_parameters", "mixes.0.gamma"}
    for _ in range(2):  # uncached, then cached
        embedder.zero_grad()
        out = embedder(batch_to_ids(SENTENCES)).input
        loss = (out * torch.linspace(-1, 1, OUTPUT_DIM)).sum()
        penalty = regularization_penalty(embedder)
        assert penalty is not None
        (loss + penalty).backward()
        assert all(p.grad is None for p in bilm.parameters())
        mix = embedder.mixes[0]
        assert mix.scalar_parameters.grad is not None
        assert mix.scalar_parameters.grad.abs().sum() > 0
        assert mix.gamma.grad is not None and mix.gamma.grad.abs().sum() > 0


def test_requires_grad_trains_the_bilm_without_caches(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, requires_grad=True, dropout=0.0)
    assert embedder.cache is None
    bilm = embedder.runner.bilm
    assert not bilm.char_encoder.cache_tokens
    assert all(p.requires_grad for p in bilm.parameters())
    embedder(batch_to_ids(SENTENCES)).input.sum().backward()
    assert bilm.char_encoder.projection_weight.grad is not None
    assert bilm.forward_layers[1].input_weight.grad is not None


def test_regularization_penalty_sums_the_mixes(tiny_bilm_dir: Path) -> None:
    assert regularization_penalty(build(tiny_bilm_dir)) is None
    embedder = build(tiny_bilm_dir, mixes=[{"l2": 0.1}, {"l2": 0.5}, {}])
    with torch.no_grad():
        embedder.mixes[0].scalar_parameters.copy_(torch.tensor([1.0, 0.0, 0.0]))
        embedder.mixes[1].scalar_parameters.copy_(torch.tensor([0.0, 2.0, 0.0]))
        embedder.mixes[2].scalar_parameters.copy_(torch.tensor([5.0, 5.0, 5.0]))
    penalty = regularization_penalty(embedder)
    assert penalty is not None
    assert penalty.item() == pytest.approx(0.1 * 1.0 + 0.5 * 4.0)


# ----------------------------------------------------------------- placements and report


def test_two_mixes_give_an_extra_representation(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, mixes=[{}, {"mode": "last"}], dropout=0.0).eval()
    assert embedder.mixes.extra == 1
    ids = batch_to_ids(SENTENCES)
    embedded = embedder(ids)
    out = embedded.input
    assert len(embedded.extra) == 1
    extra = embedded.extra[0]
    assert extra.shape == out.shape == (3, 7, OUTPUT_DIM)
    with torch.no_grad():
        layers, _ = embedder.runner(ids)
    torch.testing.assert_close(extra, layers[-1])
    torch.testing.assert_close(out, sum(layers) / 3)
    # separate parameters per placement
    assert embedder.mixes[0].scalar_parameters is not embedder.mixes[1].scalar_parameters


def test_the_mix_log_learns_where_each_embedder_places_its_first_mix(tiny_bilm_dir: Path
                                                                     ) -> None:
    stack = torch.nn.ModuleDict({"input": build(tiny_bilm_dir),
                                 "output": build(tiny_bilm_dir, at_input=False)})
    assert mix_placements(stack) == {"input": True, "output": False}


def test_mix_report(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, mixes=[{}, {"mode": "fixed", "weights": [1, 0, 3]}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = embedder.mix_report()
    assert report == [{"weights": [0.333333, 0.333333, 0.333333], "gamma": 1.0},
                      {"weights": [0.25, 0.0, 0.75], "gamma": 1.0}]
    with torch.no_grad():
        embedder.mixes[0].scalar_parameters.copy_(torch.tensor([0.0, 0.0, 1.0]))
        embedder.mixes[0].gamma.fill_(2.5)
    first = embedder.mix_report()[0]
    assert sum(first["weights"]) == pytest.approx(1.0, abs=1e-5)
    assert first["weights"][2] > first["weights"][0] == first["weights"][1]
    assert first["gamma"] == 2.5


def test_dropout_applies_in_training_only(tiny_bilm_dir: Path) -> None:
    embedder = build(tiny_bilm_dir, dropout=0.5)
    ids = batch_to_ids(SENTENCES)
    embedder.eval()
    clean = embedder(ids).input
    embedder.train()
    torch.manual_seed(0)
    noisy = embedder(ids).input
    assert not torch.equal(clean, noisy)
    kept = noisy != 0
    torch.testing.assert_close(noisy[kept], 2 * clean[kept])


# ----------------------------------------------------------------- resolve_weights


def test_resolve_a_directory(tiny_bilm_dir: Path) -> None:
    assert resolve_weights(str(tiny_bilm_dir)) == (tiny_bilm_dir / "options.json",
                                                   tiny_bilm_dir / "weights.hdf5")


@pytest.mark.parametrize("present", ["options.json", "weights.hdf5"])
def test_directory_lacking_a_file(tmp_path: Path, present: str) -> None:
    (tmp_path / present).write_text("{}")
    missing = ({"options.json", "weights.hdf5"} - {present}).pop()
    with pytest.raises(DataError, match=rf"biLM directory lacks {missing}"):
        resolve_weights(str(tmp_path))


def test_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        resolve_weights("tiny")
    message = str(info.value)
    assert message.startswith("tiny: not a biLM directory") and "\n" not in message
    assert "5.5B, medium, original, small" in message


def offline(*args: Any, **kwargs: Any) -> Any:
    raise OSError("network is unreachable")


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_offline_known_name_is_a_one_line_error(name: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(DataError) as info:
        resolve_weights(name)
    message = str(info.value)
    folder = tmp_path / "cache" / name
    assert "\n" not in message
    assert message.startswith(f"cannot download {KNOWN[name].url('options.json')}")
    assert "network is unreachable" in message
    stem = KNOWN[name].stem
    assert message.endswith(f"offline? put {stem}_options.json and {stem}_weights.hdf5 into "
                            f"{folder}")
    assert not [p for p in folder.rglob("*") if p.is_file()]  # no partial downloads left


def test_offline_embedder_config_fails_with_the_folder(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    validator = Validator()
    spec = validator.component({"type": "elmo", "weights": "small"}, "token_embedder", "elmo")
    with pytest.raises(DataError, match=rf"into {tmp_path / 'cache' / 'small'}$"):
        spec.build()


def test_cached_known_name_needs_no_network(tiny_bilm_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    folder = tmp_path / "cache" / "medium"
    folder.mkdir(parents=True)
    for name in ("options.json", "weights.hdf5"):
        (folder / name).write_bytes((tiny_bilm_dir / name).read_bytes())
    assert resolve_weights("medium") == (folder / "options.json", folder / "weights.hdf5")
    assert build("medium").output_dim == OUTPUT_DIM


class Response(io.BytesIO):
    """What ``urlopen`` returns for a whole file."""

    status = 200

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.headers = {"Content-Length": str(len(data))}


def test_known_name_is_downloaded_once(tiny_bilm_dir: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ELMO_CACHE_DIR", str(cache))
    monkeypatch.chdir(tmp_path)
    requested: list[str] = []

    def fake_urlopen(request: urllib.request.Request, timeout: float = 0) -> Response:
        requested.append(request.full_url)
        kind = "options.json" if request.full_url.endswith("_options.json") else "weights.hdf5"
        return Response((tiny_bilm_dir / kind).read_bytes())

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    options, weights = resolve_weights("small")
    assert requested == [KNOWN["small"].url("options.json"), KNOWN["small"].url("weights.hdf5")]
    stem = KNOWN["small"].stem  # kept under the released files' names
    assert (options, weights) == (cache / "small" / f"{stem}_options.json",
                                  cache / "small" / f"{stem}_weights.hdf5")
    assert weights.read_bytes() == (tiny_bilm_dir / "weights.hdf5").read_bytes()
    assert sorted(p.name for p in (cache / "small").iterdir()) == [
        "SHA256SUMS", f"{stem}_options.json", f"{stem}_weights.hdf5"]  # digests: trusted
    resolve_weights("small")
    assert len(requested) == 2


def test_checksum_mismatch_leaves_nothing(tiny_bilm_dir: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(pretrained.KNOWN, "small",
                        pretrained.Released("f", "s", options_sha256="0" * 64))
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=0: Response(b"{}"))
    with pytest.raises(DataError, match=r"SHA-256 \w{64} differs from the expected 0{64}; the "
                       r"download was deleted"):
        resolve_weights("small")
    assert not list((tmp_path / "cache" / "small").iterdir())


# ----------------------------------------------------------------- ActivationCache


def test_activation_cache_keys_depend_on_namespace_and_ids() -> None:
    ids = np.arange(100, dtype=np.int64).reshape(2, 50)
    one, other = ActivationCache("a|stateless"), ActivationCache("b|stateless")
    assert one.key(ids) == ActivationCache("a|stateless").key(ids.astype(np.int32))
    assert one.key(ids) != other.key(ids)
    assert one.key(ids) != one.key(ids[:1])


def test_activation_cache_keeps_what_it_admitted_first_once_full() -> None:
    tensor = torch.ones(3, 4, 8)  # 384 bytes
    cache = ActivationCache("n", memory_mb=1000 / 2**20)  # room for two
    cache.put("a", tensor)
    cache.put("b", tensor * 2)
    cache.put("c", tensor * 3)  # full: not admitted
    assert torch.equal(cache.get("a"), tensor) and torch.equal(cache.get("b"), tensor * 2)
    assert cache.get("c") is None
    assert (cache.hits, cache.misses) == (2, 1)
    cache.put("huge", torch.ones(100, 100))  # larger than the budget: not kept
    assert cache.get("huge") is None and cache.get("a") is not None


def test_activation_cache_serves_its_share_of_every_epoch_of_a_cyclic_scan() -> None:
    # five sentences, room for two: an LRU would miss every time from the second epoch on
    cache = ActivationCache("n", memory_mb=800 / 2**20)
    for _ in range(3):
        for name in "abcde":
            if cache.get(name) is None:
                cache.put(name, torch.ones(3, 4, 8))  # 384 bytes
    assert (cache.hits, cache.misses) == (4, 11)


def test_activation_cache_stores_copies_and_fp16() -> None:
    tensor = torch.linspace(-1, 1, 24).reshape(1, 3, 8)
    cache = ActivationCache("n")
    cache.put("k", tensor)
    tensor.zero_()
    assert cache.get("k").abs().sum() > 0
    half = ActivationCache("n", fp16=True)
    value = torch.tensor([[[1 / 3]]])
    half.put("k", value)
    got = half.get("k")
    assert got.dtype == torch.float32
    assert float(got) == float(value.half()) != float(value)


def test_empty_sentences_in_a_cached_batch(tiny_bilm_dir: Path) -> None:
    cached = build(tiny_bilm_dir, dropout=0.0).eval()
    plain = build(tiny_bilm_dir, dropout=0.0, cache={"enabled": False}).eval()
    for batch in ([["A", "b"], []], [[], []]):
        ids = batch_to_ids(batch)
        expected = plain(ids).input
        torch.testing.assert_close(cached(ids).input, expected, atol=1e-6, rtol=0)
        torch.testing.assert_close(cached(ids).input, expected, atol=1e-6, rtol=0)


def test_layer_norm_statistics_include_the_sentence_boundaries(tiny_bilm_dir: Path) -> None:
    """Mixing happens before BOS/EOS are dropped (docs/paper.md, section 3)."""
    from elmo_experiments.bilm.bidirectional_lm import remove_boundaries
    from elmo_experiments.modules.embedders.scalar_mix import masked_layer_norm

    embedder = build(tiny_bilm_dir, mixes=[{"layer_norm": True}], dropout=0.0).eval()
    ids = batch_to_ids(SENTENCES)
    with torch.no_grad():
        out = embedder(ids).input
        layers, mask = embedder.runner.with_boundaries(ids)
        normed = [masked_layer_norm(layer, mask) for layer in layers]
        expected = remove_boundaries(sum(normed) / len(normed), mask)
        stripped, inner = embedder.runner(ids)
        without = sum(masked_layer_norm(layer, inner) for layer in stripped) / len(stripped)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    assert (out - without * inner[:, :, None]).abs().max() > 1e-3  # the boundaries matter
    assert torch.all(out[~inner] == 0)  # padding stays zero


def test_cache_follows_weights_loaded_after_construction(tiny_bilm_dir: Path,
                                                         other_tiny_bilm_dir: Path,
                                                         tmp_path: Path) -> None:
    """A checkpoint that replaces the biLM's weights gets its own cache keys."""
    disk = {"dropout": 0.0, "cache": {"disk_dir": str(tmp_path / "cache")}}
    first = build(tiny_bilm_dir, **disk).eval()
    first(batch_to_ids(SENTENCES))
    other = build(other_tiny_bilm_dir, dropout=0.0).eval()
    swapped = build(tiny_bilm_dir, **disk).eval()
    swapped.runner.bilm.load_state_dict(other.runner.bilm.state_dict())
    got = swapped(batch_to_ids(SENTENCES)).input
    assert swapped.cache is not None and swapped.cache.hits == 0
    torch.testing.assert_close(got, other(batch_to_ids(SENTENCES)).input, atol=1e-6, rtol=0)


def test_warm_state_needs_a_frozen_bilm(tiny_bilm_dir: Path) -> None:
    with pytest.raises(ConfigError, match="warm"):
        build(tiny_bilm_dir, state="warm", requires_grad=True)


def test_many_damaged_entries_are_warned_of_a_few_times_then_counted(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An old cache (entries without a checksum) is recomputed without a line per entry."""
    from elmo_experiments.modules.embedders.activation_cache import NAMED_DAMAGED

    cache = ActivationCache("n", disk_dir=str(tmp_path))
    keys = [f"k{i}" for i in range(NAMED_DAMAGED + 7)]
    for key in keys:
        cache.put(key, torch.ones(1, 2, 8))
    for path in tmp_path.rglob("*.npy"):  # as an older version wrote them
        np.save(path, np.ones((1, 2, 8), np.float32))
    fresh = ActivationCache("n", disk_dir=str(tmp_path))
    with caplog.at_level("WARNING", logger="elmo_experiments"):
        assert all(fresh.get(key, (1, 2, 8)) is None for key in keys)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert fresh.damaged == len(keys) and len(warnings) == NAMED_DAMAGED + 1
    assert "further damaged entries are recomputed without a warning" in warnings[-1]
