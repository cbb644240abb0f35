"""Weight files in the released layout: round trips, the forget bias, layouts, errors; options."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from elmo_experiments.bilm.bidirectional_lm import BidirectionalLM
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.weights import (
    load_bilm,
    load_weights,
    save_weights,
    weights_digest,
    write_random_weights,
)
from elmo_experiments.errors import DataError

TINY = BilmOptions(cell_dim=16, projection_dim=4, filters=((1, 4), (2, 4)), n_highway=1,
                   char_embedding_dim=4)
C, P, F, E = 16, 4, 8, 4
CELL = "RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell"
FORGET = slice(2 * C, 3 * C)  # the f block of the [i, j, f, o] gates
SENTENCES = [["The", "cat", "sat", "."], ["Hello", "world"], ["A"]]


def random_bilm(seed: int = 0, random_biases: bool = False) -> BidirectionalLM:
    bilm = BidirectionalLM(TINY)
    generator = torch.Generator().manual_seed(seed)
    bilm.reset_parameters(generator)
    if random_biases:  # reset_parameters leaves most biases at 0/1; make every entry distinct
        with torch.no_grad():
            for name, parameter in bilm.named_parameters():
                if "bias" in name:
                    parameter.copy_(torch.randn(parameter.shape, generator=generator))
    return bilm.requires_grad_(False).eval()


def outputs(bilm: BidirectionalLM) -> list[torch.Tensor]:
    with torch.no_grad():
        layers, _, _ = bilm(batch_to_ids(SENTENCES))
    return layers


def expected_layout(options: BilmOptions) -> dict[str, tuple[int, ...]]:
    e, f, p, c = (options.char_embedding_dim, options.num_filters, options.projection_dim,
                  options.cell_dim)
    shapes: dict[str, tuple[int, ...]] = {"char_embed": (261, e)}
    for i, (width, count) in enumerate(options.filters):
        shapes[f"CNN/W_cnn_{i}"] = (1, width, e, count)
        shapes[f"CNN/b_cnn_{i}"] = (count,)
    for k in range(options.n_highway):
        for part in ("carry", "transform"):
            shapes[f"CNN_high_{k}/W_{part}"] = (f, f)
            shapes[f"CNN_high_{k}/b_{part}"] = (f,)
    shapes["CNN_proj/W_proj"] = (f, p)
    shapes["CNN_proj/b_proj"] = (p,)
    for d in range(2):
        for layer in range(options.n_layers):
            cell = CELL.format(d=d, l=layer)
            shapes[f"{cell}/W_0"] = (2 * p, 4 * c)
            shapes[f"{cell}/B"] = (4 * c,)
            shapes[f"{cell}/W_P_0"] = (c, p)
    return shapes


def datasets(path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    found: dict[str, tuple[tuple[int, ...], np.dtype]] = {}

    def visit(name: str, item: object) -> None:
        if isinstance(item, h5py.Dataset):
            found[name] = (tuple(item.shape), item.dtype)

    with h5py.File(path, "r") as handle:
        handle.visititems(visit)
    return found


# ----------------------------------------------------------------- round trip


def test_round_trip_gives_identical_tensors_and_outputs(tmp_path: Path) -> None:
    bilm = random_bilm()
    save_weights(bilm, tmp_path)
    loaded = load_bilm(tmp_path / "options.json", tmp_path / "weights.hdf5")
    assert loaded.options == bilm.options
    original, restored = bilm.state_dict(), loaded.state_dict()
    assert original.keys() == restored.keys()
    for name, tensor in original.items():
        assert torch.equal(tensor, restored[name]), name
    for a, b in zip(outputs(bilm), outputs(loaded), strict=True):
        assert torch.equal(a, b)


def test_round_trip_with_arbitrary_biases(tmp_path: Path) -> None:
    # the exported forget bias is b - 1 in float32, so b itself comes back within rounding
    bilm = random_bilm(seed=3, random_biases=True)
    save_weights(bilm, tmp_path)
    loaded = load_bilm(tmp_path / "options.json", tmp_path / "weights.hdf5")
    restored = loaded.state_dict()
    for name, tensor in bilm.state_dict().items():
        if name.endswith(".bias") and ("forward_layers" in name or "backward_layers" in name):
            torch.testing.assert_close(restored[name], tensor, atol=1e-6, rtol=0)
        else:
            assert torch.equal(tensor, restored[name]), name
    for a, b in zip(outputs(bilm), outputs(loaded), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)


def test_saved_file_has_the_released_layout(tmp_path: Path) -> None:
    save_weights(random_bilm(), tmp_path)
    found = datasets(tmp_path / "weights.hdf5")
    expected = expected_layout(TINY)
    assert {name: shape for name, (shape, _) in found.items()} == expected
    assert all(dtype == np.float32 for _, dtype in found.values())
    options = json.loads((tmp_path / "options.json").read_text())
    assert options["lstm"]["dim"] == C and options["lstm"]["projection_dim"] == P
    assert options["char_cnn"]["filters"] == [[1, 4], [2, 4]]
    assert options["char_cnn"]["n_characters"] == 262
    assert not list(tmp_path.glob(".*tmp"))


def test_export_matches_the_raw_datasets(tmp_path: Path) -> None:
    """Each parameter lands in its dataset in the row-vector, TF-gate-order convention."""
    bilm = random_bilm(seed=1, random_biases=True)
    save_weights(bilm, tmp_path)
    enc = bilm.char_encoder
    with h5py.File(tmp_path / "weights.hdf5", "r") as h:
        np.testing.assert_array_equal(h["char_embed"][...], enc.char_embedding[1:].numpy())
        for i, (width, _) in enumerate(TINY.filters):
            raw = h[f"CNN/W_cnn_{i}"][...]  # (1, width, e, n)
            torch_weight = enc.conv_weights[i].detach().numpy()  # (n, e, width)
            for k in range(width):
                np.testing.assert_array_equal(raw[0, k], torch_weight[:, :, k].T)
            np.testing.assert_array_equal(h[f"CNN/b_cnn_{i}"][...], enc.conv_biases[i].numpy())
        weight = enc.highway_weights[0].detach().numpy()
        bias = enc.highway_biases[0].detach().numpy()
        np.testing.assert_array_equal(h["CNN_high_0/W_carry"][...], weight[:, :F])
        np.testing.assert_array_equal(h["CNN_high_0/W_transform"][...], weight[:, F:])
        np.testing.assert_array_equal(h["CNN_high_0/b_carry"][...], bias[:F])
        np.testing.assert_array_equal(h["CNN_high_0/b_transform"][...], bias[F:])
        np.testing.assert_array_equal(h["CNN_proj/W_proj"][...], enc.projection_weight.numpy())
        for d, layers in enumerate([bilm.forward_layers, bilm.backward_layers]):
            for index, lstm in enumerate(layers):
                cell = CELL.format(d=d, l=index)
                w0 = h[f"{cell}/W_0"][...]
                np.testing.assert_array_equal(w0[:P], lstm.input_weight.detach().numpy().T)
                np.testing.assert_array_equal(w0[P:], lstm.hidden_weight.detach().numpy().T)
                np.testing.assert_array_equal(h[f"{cell}/W_P_0"][...],
                                              lstm.projection.detach().numpy().T)
                raw_b = h[f"{cell}/B"][...]
                b = lstm.bias.detach().numpy()
                # the forget block is exported without the +1; i, j and o blocks unchanged
                np.testing.assert_array_equal(raw_b[FORGET], b[FORGET] - np.float32(1))
                others = np.r_[0 : 2 * C, 3 * C : 4 * C]
                np.testing.assert_array_equal(raw_b[others], b[others])


def test_forget_bias_gets_plus_one_on_load(tmp_path: Path) -> None:
    save_weights(random_bilm(), tmp_path)
    with h5py.File(tmp_path / "weights.hdf5", "r+") as h:
        for d in range(2):
            for layer in range(2):
                h[f"{CELL.format(d=d, l=layer)}/B"][...] = np.arange(4 * C, dtype=np.float32)
    loaded = load_bilm(tmp_path / "options.json", tmp_path / "weights.hdf5")
    expected = np.arange(4 * C, dtype=np.float32)
    expected[2 * C : 3 * C] += 1.0
    for lstm in [*loaded.forward_layers, *loaded.backward_layers]:
        np.testing.assert_array_equal(lstm.bias.numpy(), expected)


def test_forget_bias_on_the_fixture_weights(fixtures_dir: Path) -> None:
    bilm = load_bilm(fixtures_dir / "options.json", fixtures_dir / "lm_weights.hdf5")
    c = bilm.options.cell_dim
    with h5py.File(fixtures_dir / "lm_weights.hdf5", "r") as h:
        for d, layers in enumerate([bilm.forward_layers, bilm.backward_layers]):
            for index, lstm in enumerate(layers):
                raw = h[f"{CELL.format(d=d, l=index)}/B"][...]
                expected = raw.copy()
                expected[2 * c : 3 * c] += np.float32(1.0)
                np.testing.assert_array_equal(lstm.bias.numpy(), expected)


def test_padding_character_row_is_zero_after_load(tmp_path: Path) -> None:
    save_weights(random_bilm(), tmp_path)
    with h5py.File(tmp_path / "weights.hdf5", "r+") as h:
        h["char_embed"][...] = np.ones((261, E), dtype=np.float32)
    loaded = load_bilm(tmp_path / "options.json", tmp_path / "weights.hdf5")
    assert not loaded.char_encoder.char_embedding[0].any()
    assert (loaded.char_encoder.char_embedding[1:] == 1).all()


def test_load_bilm_is_frozen_and_in_eval_mode(tiny_bilm_dir: Path) -> None:
    bilm = load_bilm(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
    assert not bilm.training
    assert not any(p.requires_grad for p in bilm.parameters())


def test_write_random_weights_is_seeded(tmp_path: Path) -> None:
    a = load_bilm(*(write_random_weights(tmp_path / "a", TINY, seed=5) / n
                    for n in ("options.json", "weights.hdf5"))).state_dict()
    b = load_bilm(*(write_random_weights(tmp_path / "b", TINY, seed=5) / n
                    for n in ("options.json", "weights.hdf5"))).state_dict()
    c = load_bilm(*(write_random_weights(tmp_path / "c", TINY, seed=6) / n
                    for n in ("options.json", "weights.hdf5"))).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_weights_digest_identifies_both_files(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    options, weights = tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5"
    digest = weights_digest(options, weights)
    assert len(digest) == 40 and digest == weights_digest(options, weights)
    copy = tmp_path / "copy"
    shutil.copytree(tiny_bilm_dir, copy)
    assert weights_digest(copy / "options.json", copy / "weights.hdf5") == digest
    with h5py.File(copy / "weights.hdf5", "r+") as h:
        h["CNN_proj/b_proj"][0] += 1.0
    assert weights_digest(copy / "options.json", copy / "weights.hdf5") != digest
    (tmp_path / "options.json").write_text(options.read_text() + " ")
    assert weights_digest(tmp_path / "options.json", weights) != digest


# ----------------------------------------------------------------- weight errors


@pytest.fixture
def weights_copy(tmp_path: Path, tiny_bilm_dir: Path) -> Path:
    copy = tmp_path / "bilm"
    shutil.copytree(tiny_bilm_dir, copy)
    return copy


def load_error(directory: Path) -> str:
    with pytest.raises(DataError) as info:
        load_bilm(directory / "options.json", directory / "weights.hdf5")
    message = str(info.value)
    assert "\n" not in message
    assert str(directory / "weights.hdf5") in message or "options.json" in message
    return message


@pytest.mark.parametrize(("name", "shape"), [
    ("CNN_proj/b_proj", (P,)),
    ("char_embed", (261, E)),
    (f"{CELL.format(d=1, l=1)}/W_P_0", (C, P)),
])
def test_missing_dataset(weights_copy: Path, name: str, shape: tuple[int, ...]) -> None:
    with h5py.File(weights_copy / "weights.hdf5", "r+") as h:
        del h[name]
    message = load_error(weights_copy)
    assert f"missing dataset {name} (expected shape {shape})" in message


def test_a_group_where_a_dataset_belongs(weights_copy: Path) -> None:
    with h5py.File(weights_copy / "weights.hdf5", "r+") as h:
        del h["char_embed"]
        h.create_group("char_embed")
    assert load_error(weights_copy).endswith(
        f"weights.hdf5: char_embed is a group, not a dataset (expected shape {(261, E)})")


@pytest.mark.parametrize(("name", "bad", "good"), [
    ("CNN_high_0/W_carry", (F, F - 1), (F, F)),
    ("CNN/W_cnn_1", (1, 3, E, 4), (1, 2, E, 4)),
    (f"{CELL.format(d=0, l=0)}/B", (3 * C,), (4 * C,)),
    ("char_embed", (262, E), (261, E)),
])
def test_wrong_shape(weights_copy: Path, name: str, bad: tuple[int, ...],
                     good: tuple[int, ...]) -> None:
    with h5py.File(weights_copy / "weights.hdf5", "r+") as h:
        del h[name]
        h.create_dataset(name, data=np.zeros(bad, dtype=np.float32))
    message = load_error(weights_copy)
    assert f"dataset {name} has shape {bad}, expected {good}" in message


def test_options_that_do_not_match_the_weights(weights_copy: Path) -> None:
    options = json.loads((weights_copy / "options.json").read_text())
    options["lstm"]["projection_dim"] = 5
    (weights_copy / "options.json").write_text(json.dumps(options))
    message = load_error(weights_copy)
    assert "has shape" in message and "expected" in message


def test_more_layers_in_options_than_in_the_file(weights_copy: Path) -> None:
    options = json.loads((weights_copy / "options.json").read_text())
    options["lstm"]["n_layers"] = 3
    (weights_copy / "options.json").write_text(json.dumps(options))
    message = load_error(weights_copy)
    assert f"missing dataset {CELL.format(d=0, l=2)}/W_0" in message


def test_missing_weight_file(tmp_path: Path) -> None:
    bilm = BidirectionalLM(TINY)
    with pytest.raises(DataError, match=r"nothing\.hdf5: no such weight file"):
        load_weights(bilm, tmp_path / "nothing.hdf5")


# ----------------------------------------------------------------- options


def test_fixture_options_load(fixtures_dir: Path) -> None:
    options = BilmOptions.load(fixtures_dir / "options.json")
    assert (options.cell_dim, options.projection_dim, options.n_layers) == (64, 16, 2)
    assert options.filters == ((1, 4), (2, 8), (3, 16), (4, 32), (5, 64))
    assert options.num_filters == 124
    assert (options.char_embedding_dim, options.n_highway, options.n_characters) == (4, 2, 262)
    assert (options.cell_clip, options.proj_clip, options.use_skip_connections) == (3, 3, True)


def test_options_round_trip() -> None:
    assert BilmOptions.from_dict(TINY.to_dict()) == TINY
    original = BilmOptions(cell_dim=32, projection_dim=8, n_layers=3, cell_clip=None,
                           proj_clip=None, use_skip_connections=False, activation="tanh")
    assert BilmOptions.from_dict(json.loads(json.dumps(original.to_dict()))) == original


def test_training_time_character_count_becomes_262() -> None:
    data = TINY.to_dict()
    data["char_cnn"]["n_characters"] = 261
    assert BilmOptions.from_dict(data).n_characters == 262


def write_options(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "options.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("edit", "pattern"), [
    (lambda d: d.pop("char_cnn"), r"missing key 'char_cnn'"),
    (lambda d: d["lstm"].pop("dim"), r"missing key 'lstm\.dim'"),
    (lambda d: d["char_cnn"].pop("embedding"), r"missing key 'char_cnn\.embedding'"),
    (lambda d: d["char_cnn"].__setitem__("filters", [[1]]),
     r"char_cnn\.filters must be a list of \[width, count\] pairs"),
    (lambda d: d["lstm"].__setitem__("dim", "wide"), r"lstm\.dim must be int, got 'wide'"),
    (lambda d: d["char_cnn"].__setitem__("activation", "sigmoid"),
     r"char_cnn\.activation 'sigmoid' is not relu/tanh"),
    (lambda d: d["char_cnn"].__setitem__("max_characters_per_token", 60),
     r"max_characters_per_token must be 50"),
])
def test_options_errors(tmp_path: Path, edit, pattern: str) -> None:  # type: ignore[no-untyped-def]
    data = TINY.to_dict()
    edit(data)
    path = write_options(tmp_path, data)
    with pytest.raises(DataError, match=pattern) as info:
        BilmOptions.load(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_options_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"options\.json: expected a JSON object, got list"):
        BilmOptions.load(write_options(tmp_path, [1, 2]))


def test_options_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_text('{\n  "lstm": {\n    "dim": 4,,\n  }\n}\n')
    with pytest.raises(DataError, match=r"options\.json:3: not valid JSON"):
        BilmOptions.load(path)


def test_options_not_utf8_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_bytes('{"lstm": {"dim": 4}, "note": "café"}'.encode("latin-1"))
    with pytest.raises(DataError) as info:
        BilmOptions.load(path)
    assert str(info.value) == f"{path}: not UTF-8 text (byte 33)"


def test_options_nested_too_deeply_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataError) as info:
        BilmOptions.load(path)
    assert str(info.value) == (f"{path}: JSON nested too deeply to read (arrays or objects "
                               f"thousands of levels deep)")


def test_options_file_missing(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"options\.json: no such options file"):
        BilmOptions.load(tmp_path / "options.json")


def test_from_dict_names_its_source() -> None:
    with pytest.raises(DataError, match=r"^somewhere\.json: missing key 'lstm'$"):
        BilmOptions.from_dict({}, "somewhere.json")
