"""``elmo-exp embed``: biLM vectors for a text file (one sentence per line) into an HDF5 file, at
corpus scale.

The output is AllenNLP's layout by default (``sentences``: dataset ``"i"`` for line i, plus
``sentence_to_index``), or one ``ragged`` dataset ``embeddings`` holding every sentence side by
side along the token axis (the sentence axis with ``pool``) with ``offsets`` (pool ``none``:
sentence i is ``embeddings[..., offsets[i]:offsets[i + 1], :]``). Either way the file's
``embed_settings`` attribute records how it was made.

The work goes through a folder beside the output, ``.NAME.partial``: each batch's vectors are
appended to ``vectors.bin`` and ``progress.pt`` (written atomically, after the vectors are
synced) says how many batches are done, with the LSTM state a stateful run carries on. An
interrupted run (a signal, a power cut) resumes with ``recover`` from the last batch recorded,
recomputing and duplicating nothing; the HDF5 file is written from ``vectors.bin`` at the end,
through ``atomic_write`` (the user's umask, all or nothing). A failed write (a full disk) removes
the folder. Memory is bounded by the batch and the sort window, plus a few numbers per line.

In the deterministic state modes (``stateless``, ``warm``) each window of
``SORT_WINDOW_BATCHES`` batches is sorted by length, longest first, so batches carry little
padding; the output stays in input order. ``stateful`` runs keep the file's order, as its
vectors depend on what ran before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from array import array
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.data.files import atomic_write, atomic_write_text, fsync_path, iter_lines
from elmo_experiments.data.files import write_error as _write_error
from elmo_experiments.data.hdf5_output import HDF5Output
from elmo_experiments.devices import resolve_device
from elmo_experiments.errors import DataError, WriteError
from elmo_experiments.faults import fault_point
from elmo_experiments.progress import progress as progress_display

LAYER_CHOICES = ("all", "top", "average")
POOL_CHOICES = ("none", "mean", "max", "first")
DTYPE_CHOICES = ("float32", "float16")
LAYOUT_CHOICES = ("sentences", "ragged")
SORTABLE_STATES = ("stateless", "warm")  # a sentence's vectors do not depend on its batch
SORT_WINDOW_BATCHES = 100  # batches read, sorted by length and run together
SETTINGS_ATTRIBUTE = "embed_settings"


@dataclass(frozen=True)
class EmbedOptions:
    """What to write: ``layers`` (all, top, average), ``pool`` over the tokens (none, mean, max,
    first), the ``dtype``, the ``layout``; and how: batches, state mode, precision, ``tokenize``
    (raw text, spaCy's rules as in pretraining; else whitespace), ``sort`` by length."""

    layers: str = "all"
    pool: str = "none"
    dtype: str = "float32"
    layout: str = "sentences"
    batch_size: int = 64
    state: str = "stateless"
    precision: str = "fp32"
    tokenize: bool = False
    sort: bool = True

    def __post_init__(self) -> None:
        for name, choices in (("layers", LAYER_CHOICES), ("pool", POOL_CHOICES),
                              ("dtype", DTYPE_CHOICES), ("layout", LAYOUT_CHOICES)):
            if getattr(self, name) not in choices:
                raise DataError(f"{name} must be one of {choices}, got {getattr(self, name)!r}")
        if self.batch_size < 1:
            raise DataError(f"batch_size must be at least 1, got {self.batch_size}")

    @property
    def sorted(self) -> bool:
        return self.sort and self.state in SORTABLE_STATES

    def shape(self, tokens: int, num_layers: int, dim: int) -> tuple[int, ...]:
        """One sentence's array: (layers,) if all, (tokens,) unless pooled, (dim,)."""
        return ((num_layers,) if self.layers == "all" else ()) + (
            () if self.pool != "none" else (tokens,)) + (dim,)

    def splitter(self) -> Callable[[str], list[str]]:
        if self.tokenize:
            from elmo_experiments.data.tokenizers import tokenize

            return tokenize
        return str.split


def sentence_vectors(layers: torch.Tensor, options: EmbedOptions) -> np.ndarray:
    """One sentence's output from its (layers, tokens, dim) float32 activations: the layers
    chosen, pooled over the tokens (a sentence without tokens pools to zeros), in the dtype."""
    x = layers[-1] if options.layers == "top" else (
        layers.mean(dim=0) if options.layers == "average" else layers)
    if options.pool != "none":
        if x.shape[-2] == 0:
            x = x.new_zeros(*x.shape[:-2], x.shape[-1])
        elif options.pool == "mean":
            x = x.mean(dim=-2)
        elif options.pool == "max":
            x = x.amax(dim=-2)
        else:
            x = x[..., 0, :]
    return np.ascontiguousarray(x.numpy().astype(options.dtype))


def _window_batches(lengths: np.ndarray, options: EmbedOptions) -> list[np.ndarray]:
    """The batches of one window, as indices into it: longest first when sorting."""
    order = np.argsort(-lengths, kind="stable") if options.sorted else np.arange(len(lengths))
    return [order[i:i + options.batch_size] for i in range(0, len(order), options.batch_size)]


def schedule(lengths: np.ndarray, options: EmbedOptions) -> Iterator[np.ndarray]:
    """The line numbers of each batch, in the order they run (the same in every run)."""
    window = options.batch_size * SORT_WINDOW_BATCHES
    for start in range(0, len(lengths), window):
        for batch in _window_batches(lengths[start:start + window], options):
            yield start + batch


def _lines(path: str | Path) -> Iterator[str]:
    for _, line in iter_lines(path):
        yield line.rstrip("\r\n")


def scan(path: str | Path, split: Callable[[str], list[str]]) -> tuple[np.ndarray, str]:
    """Tokens per line, and a SHA-256 of the text (a recovery must read the same input)."""
    digest, lengths = hashlib.sha256(), array("q")
    for line in _lines(path):
        digest.update(line.encode("utf-8") + b"\n")
        lengths.append(len(split(line)))
    return np.frombuffer(lengths, dtype=np.int64).copy(), digest.hexdigest()


@dataclass
class Progress:
    """How far a run got: batches done, bytes of vectors written, the carried LSTM state."""

    batches: int = 0
    bytes: int = 0
    carried: Any = None


def _carried_state(carried: Any) -> bool:
    """Whether ``carried`` is what ``Progress.carried`` holds: None, or (h, c) tensor pairs."""
    return carried is None or (isinstance(carried, list | tuple) and all(
        isinstance(pair, list | tuple) and len(pair) == 2
        and all(isinstance(t, torch.Tensor) for t in pair) for pair in carried))


class Staging:
    """The folder beside ``output`` where an unfinished embed keeps its work."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.folder = output.parent / f".{output.name}.partial"
        self.settings = self.folder / "settings.json"
        self.vectors = self.folder / "vectors.bin"
        self.progress = self.folder / "progress.pt"

    def exists(self) -> bool:
        return self.folder.exists()

    def start(self, settings: dict[str, Any]) -> Progress:
        """A fresh folder (an old one removed)."""
        self.remove()
        self.folder.mkdir(parents=True)
        atomic_write_text(self.settings, json.dumps(settings, indent=1, sort_keys=True))
        self.vectors.touch()
        fsync_path(self.folder)
        progress = Progress()
        self.commit(progress)
        return progress

    def resume(self, settings: dict[str, Any]) -> Progress:
        """The progress of the interrupted run, if it was made with ``settings``."""
        saved = self._read(self.settings, lambda: json.loads(
            self.settings.read_text(encoding="utf-8")))
        state = self._read(self.progress, lambda: torch.load(self.progress, map_location="cpu",
                                                             weights_only=True))
        if not isinstance(saved, dict):
            raise self._damaged(self.settings, "not a JSON object")
        differences = [f"{key} {saved.get(key)!r}, not {value!r}"
                       for key, value in settings.items() if saved.get(key) != value]
        if differences:
            raise DataError(f"{self.output}: the interrupted embed in {self.folder} was made "
                            f"with {'; '.join(differences)}; run it as it was or use --force")
        if not (isinstance(state, dict) and set(state) == {"batches", "bytes", "carried"}
                and all(isinstance(state[k], int) and not isinstance(state[k], bool)
                        and state[k] >= 0 for k in ("batches", "bytes"))
                and _carried_state(state["carried"])):
            raise self._damaged(self.progress, "not a progress record (batches, bytes, carried)")
        progress = Progress(**state)
        if self.vectors.stat().st_size < progress.bytes:
            raise DataError(f"{self.vectors}: shorter than its record says; --force starts over")
        with open(self.vectors, "r+b") as handle:  # drop what the last batch left unrecorded
            handle.truncate(progress.bytes)
        return progress

    def _read(self, path: Path, read: Any) -> Any:
        """``read()``, any failure of it (unreadable, truncated, not what it should be: a
        pickle error, garbage JSON, ...) one line naming ``path``."""
        try:
            with warnings.catch_warnings():  # torch's unpickler warns about odd protocols
                warnings.simplefilter("ignore")
                return read()
        except Exception as error:  # whatever the damage: one line
            raise self._damaged(path, f"{type(error).__name__}: {error}") from None

    def _damaged(self, path: Path, why: str) -> DataError:
        why = why.strip().splitlines()[0].split(". ")[0] if why.strip() else why  # its gist
        return DataError(f"{path}: damaged ({why}), so the interrupted embed cannot resume; "
                         f"--force starts over")

    def commit(self, progress: Progress) -> None:
        atomic_write(self.progress, lambda tmp: torch.save(asdict(progress), tmp))

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _run(corpus: Path, lengths: np.ndarray, options: EmbedOptions, runner: BilmRunner,
         target: torch.device, staging: Staging, progress: Progress, show: bool) -> None:
    """Embed the batches not done yet, appending each to the staging folder."""
    split = options.splitter()
    window = options.batch_size * SORT_WINDOW_BATCHES
    done = [batch for batch, _ in zip(schedule(lengths, options), range(progress.batches),
                                      strict=False)]
    done_tokens = int(sum(lengths[batch].sum() for batch in done))
    done_sentences = sum(len(batch) for batch in done)
    runner.restore_carried_state(None if progress.carried is None else [
        (h.to(target), c.to(target)) for h, c in progress.carried])
    batch_number = 0
    with open(staging.vectors, "ab") as sink, progress_display(
            total=int(lengths.sum()), initial=done_tokens, enabled=show, unit="token",
            leave=True) as bar:
        lines = _lines(corpus)
        for start in range(0, len(lengths), window):
            text = [next(lines) for _ in range(min(window, len(lengths) - start))]
            batches = _window_batches(lengths[start:start + window], options)
            if batch_number + len(batches) <= progress.batches:  # a window done before
                batch_number += len(batches)
                continue
            tokens = [split(line) for line in text]
            for batch in batches:
                batch_number += 1
                if batch_number <= progress.batches:
                    continue
                words = [tokens[i] for i in batch]
                with torch.no_grad():
                    result, _ = runner(batch_to_ids(words).to(target))
                stacked = torch.stack(result, dim=1).float().cpu()  # (batch, layers, seq, dim)
                data = b"".join(sentence_vectors(stacked[row, :, :len(sentence)], options
                                                 ).tobytes()
                                for row, sentence in enumerate(words))
                sink.write(data)
                sink.flush()
                os.fsync(sink.fileno())
                fault_point("embed:batch")  # the vectors written, the batch not yet recorded
                progress.batches, progress.bytes = batch_number, progress.bytes + len(data)
                progress.carried = runner.carried_state()
                staging.commit(progress)
                done_sentences += len(batch)
                bar.update(sum(len(sentence) for sentence in words))
                bar.set_postfix(sentences=f"{done_sentences}/{len(lengths)}", refresh=False)


def _assemble(corpus: Path, lengths: np.ndarray, options: EmbedOptions, num_layers: int,
              dim: int, staging: Staging, settings: dict[str, Any]) -> None:
    """Write the output from ``vectors.bin``, sentences in input order."""
    import h5py

    per_token = (num_layers if options.layers == "all" else 1) * dim
    itemsize = np.dtype(options.dtype).itemsize
    sizes = (lengths * per_token if options.pool == "none"
             else np.full_like(lengths, per_token)) * itemsize
    order = np.concatenate([*schedule(lengths, options), np.zeros(0, dtype=np.int64)])
    starts = np.empty_like(sizes)
    starts[order] = np.cumsum(sizes[order]) - sizes[order]
    token_axis = 1 if options.layers == "all" else 0
    offsets = np.concatenate([[0], np.cumsum(lengths)])

    def write(tmp: str) -> None:
        with HDF5Output(tmp) as out, open(staging.vectors, "rb") as source:
            out.file.attrs[SETTINGS_ATTRIBUTE] = json.dumps(settings, sort_keys=True)
            if options.layout == "ragged":
                shape = list(options.shape(int(offsets[-1]), num_layers, dim))
                if options.pool != "none":  # a row a sentence
                    shape.insert(token_axis, len(lengths))
                embeddings = out.file.create_dataset("embeddings", shape, dtype=options.dtype)
                if options.pool == "none":
                    out.file.create_dataset("offsets", data=offsets)
            sentence_to_index: dict[str, str] = {}
            for index, line in enumerate(_lines(corpus)):
                vectors = np.frombuffer(
                    os.pread(source.fileno(), int(sizes[index]), int(starts[index])),
                    dtype=options.dtype).reshape(options.shape(lengths[index], num_layers, dim))
                if options.layout == "sentences":
                    out.file.create_dataset(str(index), data=vectors)
                    sentence_to_index.setdefault(line.strip(), str(index))
                elif options.pool != "none":
                    embeddings[(slice(None),) * token_axis + (index,)] = vectors
                elif lengths[index]:
                    where = slice(int(offsets[index]), int(offsets[index + 1]))
                    embeddings[(slice(None),) * token_axis + (where,)] = vectors
                out.check()  # stop at the first failed write
            if options.layout == "sentences":
                index_dataset = out.file.create_dataset(
                    "sentence_to_index", (1,), dtype=h5py.string_dtype(encoding="utf-8"))
                index_dataset[0] = json.dumps(sentence_to_index)

    atomic_write(staging.output, write)


def _check_finished(output: Path, settings: dict[str, Any]) -> None:
    """``output`` must be a complete embed made with ``settings``."""
    import h5py

    try:
        with h5py.File(output, "r") as handle:
            saved = json.loads(handle.attrs.get(SETTINGS_ATTRIBUTE, "{}"))
    except (OSError, ValueError):
        saved = None
    if saved != settings:
        raise DataError(f"{output} exists and was not made by this embed; --force replaces it")


def embed_file(input_path: str | Path, output_path: str | Path, weights: str,
               layers: str = "all", batch_size: int = 64, state: str = "stateless",
               progress: bool = True, precision: str = "fp32", device: str = "cpu", *,
               pool: str = "none", dtype: str = "float32", layout: str = "sentences",
               tokenize: bool = False, sort: bool = True, recover: bool = False,
               force: bool = False) -> int:
    """Embed each line of ``input_path`` into ``output_path`` (see the module's docstring);
    returns the number of lines. An existing output, or an interrupted run's folder, is an
    error unless ``recover`` (finish the interrupted run; nothing to do if the output is
    complete) or ``force`` (start over)."""
    options = EmbedOptions(layers, pool, dtype, layout, batch_size, state, precision, tokenize,
                           sort)
    output = Path(output_path)
    staging = Staging(output)
    if not (recover or force):
        if staging.exists():
            raise DataError(f"{output}: an interrupted embed left {staging.folder}; --recover "
                            "finishes it, --force starts over")
        if output.exists():
            raise DataError(f"{output} exists; --force replaces it")
    options_file, weight_file = resolve_weights(weights)
    lengths, digest = scan(input_path, options.splitter())
    settings = {**asdict(options), "weights": str(Path(weight_file).resolve()),
                "input_sha256": digest, "sentences": len(lengths)}
    if recover and not staging.exists() and output.exists():
        _check_finished(output, settings)  # nothing to recover
        return len(lengths)
    bilm = load_bilm(options_file, weight_file)
    num_layers, dim = bilm.num_layers, bilm.output_dim
    try:
        # no progress.pt yet: killed before the first record, nothing to keep
        done = (staging.resume(settings) if recover and staging.progress.exists()
                else staging.start(settings))
        if done.batches < sum(1 for _ in schedule(lengths, options)):
            # no character cache: memory stays bounded, a recovery computes what a whole run would
            runner = BilmRunner(bilm, state, precision=precision)
            target = resolve_device(device, "--device")
            runner.to(target)
            _run(Path(input_path), lengths, options, runner, target, staging, done, progress)
        _assemble(Path(input_path), lengths, options, num_layers, dim, staging, settings)
    except WriteError:
        staging.remove()
        raise
    except OSError as error:  # a full disk: nothing left behind, as atomic_write does
        staging.remove()
        raise _write_error(output, error) from None
    staging.remove()
    return len(lengths)
