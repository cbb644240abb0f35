"""Reading and writing biLM weights in the released layout (``options.json`` + ``weights.hdf5``).

Dataset names, shapes, the TF gate order [i, j, f, o], the forget bias left out of the file and
``char_embed`` without its padding row are described in docs/paper.md, section 9.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.bilm.bidirectional_lm import BidirectionalLM
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.data.files import atomic_write, sha1_of
from elmo_experiments.data.hdf5_output import HDF5Output
from elmo_experiments.errors import DataError

OPTIONS_FILE, WEIGHTS_FILE = "options.json", "weights.hdf5"


def _cell(direction: int, layer: int) -> str:
    return f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"


def _layout(o: BilmOptions) -> Iterator[tuple[str, tuple[int, ...], str]]:
    """(dataset name, released shape, role) for every dataset of a model with options ``o``."""
    e, f, p, c = o.char_embedding_dim, o.num_filters, o.projection_dim, o.cell_dim
    yield "char_embed", (o.n_characters - 1, e), "char_embed"
    for i, (width, count) in enumerate(o.filters):
        yield f"CNN/W_cnn_{i}", (1, width, e, count), f"conv_w:{i}"
        yield f"CNN/b_cnn_{i}", (count,), f"conv_b:{i}"
    for k in range(o.n_highway):
        for part in ("carry", "transform"):
            yield f"CNN_high_{k}/W_{part}", (f, f), f"high_w:{k}:{part}"
            yield f"CNN_high_{k}/b_{part}", (f,), f"high_b:{k}:{part}"
    yield "CNN_proj/W_proj", (f, p), "proj_w"
    yield "CNN_proj/b_proj", (p,), "proj_b"
    for d in range(2):
        for layer in range(o.n_layers):
            yield f"{_cell(d, layer)}/W_0", (p + p, 4 * c), f"lstm_w:{d}:{layer}"
            yield f"{_cell(d, layer)}/B", (4 * c,), f"lstm_b:{d}:{layer}"
            yield f"{_cell(d, layer)}/W_P_0", (c, p), f"lstm_p:{d}:{layer}"


def _lstm(bilm: BidirectionalLM, d: int, layer: int):  # type: ignore[no-untyped-def]
    return (bilm.forward_layers if d == 0 else bilm.backward_layers)[layer]


def _assign(bilm: BidirectionalLM, role: str, value: np.ndarray) -> None:
    kind, *where = role.split(":")
    enc = bilm.char_encoder
    t = torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32))
    f = enc.num_filters
    with torch.no_grad():
        if kind == "char_embed":
            enc.char_embedding[0].zero_()
            enc.char_embedding[1:].copy_(t)
        elif kind == "conv_w":
            enc.conv_weights[int(where[0])].copy_(t[0].permute(2, 1, 0))  # (n, e, w)
        elif kind == "conv_b":
            enc.conv_biases[int(where[0])].copy_(t)
        elif kind in ("high_w", "high_b"):
            part = slice(0, f) if where[1] == "carry" else slice(f, 2 * f)
            target = enc.highway_weights if kind == "high_w" else enc.highway_biases
            target[int(where[0])][..., part].copy_(t)
        elif kind == "proj_w":
            enc.projection_weight.copy_(t)
        elif kind == "proj_b":
            enc.projection_bias.copy_(t)
        else:
            lstm = _lstm(bilm, int(where[0]), int(where[1]))
            if kind == "lstm_w":  # released (in + P, 4C), rows x then h; ours (4C, in), (4C, P)
                inputs = lstm.input_weight.shape[1]
                lstm.input_weight.copy_(t[:inputs].t())
                lstm.hidden_weight.copy_(t[inputs:].t())
            elif kind == "lstm_b":
                lstm.bias.copy_(t)
                lstm.bias[2 * lstm.cell_dim : 3 * lstm.cell_dim].add_(1.0)  # forget bias
            else:
                lstm.projection.copy_(t.t())


def _extract(bilm: BidirectionalLM, role: str) -> np.ndarray:
    kind, *where = role.split(":")
    enc = bilm.char_encoder
    f = enc.num_filters
    if kind == "char_embed":
        t = enc.char_embedding[1:]
    elif kind == "conv_w":
        t = enc.conv_weights[int(where[0])].permute(2, 1, 0)[None]
    elif kind == "conv_b":
        t = enc.conv_biases[int(where[0])]
    elif kind in ("high_w", "high_b"):
        part = slice(0, f) if where[1] == "carry" else slice(f, 2 * f)
        t = (enc.highway_weights if kind == "high_w" else enc.highway_biases)[int(where[0])]
        t = t[..., part]
    elif kind == "proj_w":
        t = enc.projection_weight
    elif kind == "proj_b":
        t = enc.projection_bias
    else:
        lstm = _lstm(bilm, int(where[0]), int(where[1]))
        if kind == "lstm_w":
            t = torch.cat([lstm.input_weight, lstm.hidden_weight], dim=1).t()
        elif kind == "lstm_b":
            t = lstm.bias.clone()
            t[2 * lstm.cell_dim : 3 * lstm.cell_dim] -= 1.0
        else:
            t = lstm.projection.t()
    return t.detach().cpu().numpy().astype(np.float32)


def _open_weights(path: Path) -> Any:
    import h5py

    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise DataError(f"{path}: not a readable HDF5 weight file ({error})") from None


def _check_layout(path: Path, handle: Any, layout: list[tuple[str, tuple[int, ...], str]]
                  ) -> None:
    """The datasets of the open weight file ``handle`` are exactly those of ``layout``, each
    with its shape and a floating-point type; else a ``DataError`` naming the dataset."""
    import h5py

    found: list[str] = []
    handle.visititems(lambda name, item: found.append(name)
                      if isinstance(item, h5py.Dataset) else None)
    extra = sorted(set(found) - {name for name, _, _ in layout})
    if extra:
        raise DataError(f"{path}: dataset {extra[0]} (and {len(extra) - 1} more) is not "
                        f"described by options.json; do its n_layers, filters and "
                        f"n_highway match the file?")
    for name, shape, _ in layout:
        if name not in handle:
            raise DataError(f"{path}: missing dataset {name} (expected shape {shape}); "
                            f"does options.json match the file?")
        dataset = handle[name]
        if not isinstance(dataset, h5py.Dataset):
            raise DataError(f"{path}: {name} is a {type(dataset).__name__.lower()}, not a "
                            f"dataset (expected shape {shape})")
        if tuple(dataset.shape) != shape:
            raise DataError(f"{path}: dataset {name} has shape {tuple(dataset.shape)}, "
                            f"expected {shape} from options.json")
        if dataset.dtype.kind != "f":
            raise DataError(f"{path}: dataset {name} holds {dataset.dtype}, not floating "
                            f"point numbers")


def check_weight_file(options_file: str | Path, weight_file: str | Path) -> None:
    """Whether ``weight_file`` holds the datasets ``options_file`` describes (names, shapes,
    floating-point types), read without their values: a ``DataError`` naming the file and the
    first dataset that differs."""
    path = Path(weight_file)
    with _open_weights(path) as handle:
        _check_layout(path, handle, list(_layout(BilmOptions.load(options_file))))


def load_weights(bilm: BidirectionalLM, path: str | Path) -> None:
    """Copy every dataset of ``path`` into ``bilm``, checked against the options the model was
    built from: each dataset present with its shape, a floating-point type and finite values,
    and no dataset the options do not describe (a file with more layers than ``n_layers``)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such weight file")
    bilm.char_encoder.clear_cache()
    layout = list(_layout(bilm.options))
    with _open_weights(path) as handle:
        _check_layout(path, handle, layout)
        for name, _, role in layout:
            dataset = handle[name]
            try:
                values = dataset[...]
            except OSError as error:
                raise DataError(f"{path}: dataset {name} cannot be read ({error})") from None
            if not np.isfinite(values).all():
                raise DataError(f"{path}: dataset {name} holds NaN or infinite values")
            _assign(bilm, role, values)


def save_weights(bilm: BidirectionalLM, directory: str | Path, dtype: type = np.float32) -> Path:
    """Write ``options.json`` and ``weights.hdf5`` in the released layout into ``directory``
    (``dtype`` float16 halves the file; loading always upcasts to float32)."""
    import json


    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    options = json.dumps(bilm.options.to_dict(), indent=2) + "\n"
    atomic_write(directory / OPTIONS_FILE, lambda tmp: Path(tmp).write_text(options))

    def write(tmp: str) -> None:
        with HDF5Output(tmp) as out:
            for name, _, role in _layout(bilm.options):
                out.file.create_dataset(name, data=_extract(bilm, role).astype(dtype))

    atomic_write(directory / WEIGHTS_FILE, write)
    return directory


def load_bilm(options_file: str | Path, weight_file: str | Path) -> BidirectionalLM:
    """A biLM built from ``options_file`` with the weights of ``weight_file``."""
    bilm = BidirectionalLM(BilmOptions.load(options_file))
    load_weights(bilm, weight_file)
    bilm.requires_grad_(False)
    return bilm.eval()


def weights_digest(options_file: str | Path, weight_file: str | Path) -> str:
    """SHA-1 over both files: identifies the weights in cache keys."""
    return sha1_of(options_file, weight_file)


def write_random_weights(directory: str | Path, options: BilmOptions, seed: int = 0) -> Path:
    """A randomly initialised biLM saved in the released layout (tests, demos, benchmarks)."""
    generator = torch.Generator().manual_seed(seed)
    bilm = BidirectionalLM(options)
    bilm.reset_parameters(generator)
    return save_weights(bilm, directory)
