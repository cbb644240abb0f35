"""``elmo-exp embed``: biLM vectors for a text file (one sentence per line) into an HDF5 file, at
corpus scale.

The output is AllenNLP's layout by default (``sentences``: dataset ``"i"`` for line i, plus
``sentence_to_index``), or one ``ragged`` dataset ``embeddings`` holding every sentence side by
side along the token axis (the sentence axis with ``pool``) with ``offsets`` (pool ``none``:
sentence i is ``embeddings[..., offsets[i]:offsets[i + 1], :]``). Either way the file's
``embed_settings`` attribute records how it was made.

The work goes through a folder beside the output, ``.NAME.partial``: each batch's vectors are
appended to ``vectors.bin`` and ``progress.pt`` (written atomically, after the vectors are
synced) says how many batches are done, the bytes they take and their running CRC-32, with the
LSTM state a stateful run carries on. An interrupted run (a signal, a power cut) resumes with
``recover`` from the last batch recorded, recomputing and duplicating nothing, once the record
agrees with the input, the options and ``vectors.bin`` (re-read for its CRC: at disk speed, as
writing the output reads it again anyway); a record that does not is a one-line error that
leaves the folder as it is. The HDF5 file is written from ``vectors.bin`` at the end,
through ``atomic_write`` (the user's umask, all or nothing). A failed write (a full disk, no
permission) keeps the batches recorded for ``recover`` (a failure before the first removes the
folder); a staging file that cannot be read for its permissions is said to be intact, not
damaged. Memory is bounded by the batch and the sort window, plus a few numbers per line.

In the deterministic state modes (``stateless``, ``warm``) each window of
``SORT_WINDOW_BATCHES`` batches is sorted by length, longest first, so batches carry little
padding; the output stays in input order. ``stateful`` runs keep the file's order, as its
vectors depend on what ran before.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import warnings
import zlib
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
from elmo_experiments.data.files import (
    atomic_write,
    atomic_write_text,
    fsync_path,
    iter_lines,
    resolve_data_path,
)
from elmo_experiments.data.files import write_error as _write_error
from elmo_experiments.data.hdf5_output import HDF5Output
from elmo_experiments.devices import resolve_device
from elmo_experiments.errors import DataError, WriteError
from elmo_experiments.faults import fault_point
from elmo_experiments.progress import progress as progress_display
from elmo_experiments.training.run_dir import save_checkpoint

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
        check_batch_size(self.batch_size)

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


def check_batch_size(batch_size: object) -> None:
    """A batch size is a whole number, at least 1; a one-line ``DataError`` otherwise."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) \
            or batch_size < 1:
        raise DataError(f"batch_size must be a whole number, at least 1, got {batch_size!r}")


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


def text_lines(path: str | Path) -> Iterator[str]:
    """The lines of a UTF-8 text file without their ends, which are \\n, \\r\\n or a lone \\r
    (old Mac files), as Python's universal newlines read them."""
    for _, line in iter_lines(path):
        line = line.removesuffix("\n").removesuffix("\r")
        yield from line.split("\r")


def scan(path: str | Path, split: Callable[[str], list[str]]) -> tuple[np.ndarray, str]:
    """Tokens per line, and a SHA-256 of the text (a recovery must read the same input)."""
    digest, lengths = hashlib.sha256(), array("q")
    for line in text_lines(path):
        digest.update(line.encode("utf-8") + b"\n")
        lengths.append(len(split(line)))
    return np.frombuffer(lengths, dtype=np.int64).copy(), digest.hexdigest()


def _sentence_bytes(lengths: np.ndarray, options: EmbedOptions, num_layers: int,
                    dim: int) -> np.ndarray:
    """The bytes of each sentence's vectors."""
    per_token = (num_layers if options.layers == "all" else 1) * dim
    return (lengths * per_token if options.pool == "none"
            else np.full_like(lengths, per_token)) * np.dtype(options.dtype).itemsize


def batch_ends(lengths: np.ndarray, options: EmbedOptions, num_layers: int,
               dim: int) -> list[int]:
    """The bytes of ``vectors.bin`` after each batch: [0, after the first, ..., the whole]."""
    sizes = _sentence_bytes(lengths, options, num_layers, dim)
    return [0, *np.cumsum([int(sizes[batch].sum()) for batch in schedule(lengths, options)],
                          dtype=np.int64).tolist()]


@dataclass
class Progress:
    """How far a run got: batches done, bytes of vectors written, their running CRC-32, the
    carried LSTM state."""

    batches: int = 0
    bytes: int = 0
    crc32: int = 0
    carried: Any = None


def _carried_problem(runner: BilmRunner, carried: Any, batches: int, rows: int) -> str | None:
    """What is wrong with the carried LSTM state recorded after ``batches`` batches (None:
    nothing); a stateful run's has ``rows`` rows, those of its first batch."""
    if runner.mode != "stateful":
        return None if carried is None else f"a carried LSTM state in a {runner.mode} run"
    if batches == 0:
        return None if carried is None else "a carried LSTM state before the first batch"
    if carried is None:
        return f"no carried LSTM state after {batches} stateful batches"
    return runner.carried_state_problem(carried, rows)


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, from its ``st_mode``."""
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "a special file"


def _inaccessible(path: Path, error: OSError, verb: str, intact: str = "") -> DataError | None:
    """The one line for ``path`` that cannot be ``verb`` (read, written) for want of
    permission, or on a read-only file system (None: ``error`` is another failure): nothing
    to start over for (``intact`` says what is kept), but to fix and ``--recover``."""
    if error.errno in (errno.EACCES, errno.EPERM):
        why, fix = "permission denied", "fix its permissions"
    elif error.errno == errno.EROFS:
        why, fix = "a read-only file system", "make it writable"
    else:
        return None
    return DataError(f"{path}: cannot {verb} it ({why}); {intact}{fix}, then --recover")


def _differences(saved: dict[str, Any], settings: dict[str, Any]) -> str:
    """The settings of ``saved`` (which has every key) that differ, as 'key saved, not ours'."""
    return "; ".join(f"{key} {saved[key]!r}, not {value!r}" for key, value in settings.items()
                     if saved[key] != value)


class Staging:
    """The folder beside ``output`` where an unfinished embed keeps its work."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.folder = output.parent / f".{output.name}.partial"
        self.settings = self.folder / "settings.json"
        self.vectors = self.folder / "vectors.bin"
        self.progress = self.folder / "progress.pt"

    def exists(self) -> bool:
        return os.path.lexists(self.folder)

    def has_work(self) -> bool:
        """Whether the folder holds work to resume: a progress record, or vectors (whose record
        is then missing, which ``resume`` says). A run killed before its first record has
        neither, and starts afresh. Nothing is opened here."""
        if self.folder.is_symlink():  # embed makes a folder; a link's target it would not remove
            target = os.readlink(self.folder)
            raise DataError(f"{self.folder}: a symbolic link (to {target}), not a folder, so "
                            f"the interrupted embed cannot resume; move the folder it links to "
                            f"in its place and --recover, or --force starts over (removing the "
                            f"link only)")
        if not self.folder.is_dir():
            raise self._damaged(self.folder, "not a folder")
        progress, vectors = self._look_up(self.progress, os.lstat), self._look_up(self.vectors)
        return progress is not None or (vectors is not None and stat.S_ISREG(vectors.st_mode)
                                        and vectors.st_size > 0)

    def _look_up(self, path: Path, look: Callable[[Path], os.stat_result] = os.stat
                 ) -> os.stat_result | None:
        """``path``'s status (None: there is none), without opening it; a failure to look
        into the folder (its permissions) is one line naming the folder."""
        try:
            return look(path)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise self._inaccessible(self.folder, error, "read") or self._damaged(
                path, f"{type(error).__name__}: {error}") from None

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

    def resume(self, settings: dict[str, Any], ends: list[int],
               carried_problem: Callable[[Any, int], str | None]) -> Progress:
        """The progress of the interrupted run, if it was made with ``settings`` and its record
        agrees with ``vectors.bin``: ``ends[k]`` bytes after k batches, the CRC-32 of those
        bytes, and a carried state that ``carried_problem(carried, batches)`` finds no problem
        in. Any disagreement is a one-line ``DataError`` that changes nothing; else the tail the
        last batch left unrecorded is dropped."""
        saved = self._read(self.settings, lambda: json.loads(
            self.settings.read_text(encoding="utf-8")))
        state = self._read(self.progress, lambda: torch.load(self.progress, map_location="cpu",
                                                             weights_only=True))
        if not isinstance(saved, dict):
            raise self._damaged(self.settings, "not a JSON object")
        missing = [key for key in settings if key not in saved]
        if missing:
            raise self._damaged(self.settings, f"no {', '.join(map(repr, missing))}")
        differences = _differences(saved, settings)
        if differences:
            raise DataError(f"{self.output}: the interrupted embed in {self.folder} was made "
                            f"with {differences}; run it as it was or use --force")
        if not (isinstance(state, dict) and set(state) == set(asdict(Progress()))
                and all(isinstance(state[k], int) and not isinstance(state[k], bool)
                        and state[k] >= 0 for k in ("batches", "bytes", "crc32"))):
            raise self._damaged(self.progress,
                                "not a progress record (batches, bytes, crc32, carried)")
        progress = Progress(**state)
        if progress.batches >= len(ends):
            raise self._damaged(self.progress, f"{progress.batches} batches done, but the "
                                f"input makes {len(ends) - 1}")
        if progress.bytes != ends[progress.batches]:
            n = progress.batches
            raise self._damaged(self.progress, f"bytes {progress.bytes}, but the first {n} "
                                f"batch{'es' if n != 1 else ''} take {ends[n]}")
        problem = self._guard(self.progress, lambda: carried_problem(progress.carried,
                                                                     progress.batches))
        if problem:
            raise self._damaged(self.progress, problem)
        self._read(self.vectors, lambda: self._keep(progress), "read and write")
        return progress

    def _keep(self, progress: Progress) -> None:
        """Check ``vectors.bin`` against ``progress`` and drop what the last batch left
        unrecorded."""
        with open(self.vectors, "r+b") as handle:
            size, crc = os.fstat(handle.fileno()).st_size, 0
            if size < progress.bytes:
                raise self._damaged(self.vectors, f"{size} bytes, but {self.progress.name} "
                                    f"records {progress.bytes}")
            for block in iter(lambda: handle.read(min(1 << 20, progress.bytes - handle.tell())),
                              b""):
                crc = zlib.crc32(block, crc)
            if crc != progress.crc32:
                raise self._damaged(self.vectors, f"its first {progress.bytes} bytes do not "
                                    f"match the CRC-32 in {self.progress.name}")
            handle.truncate(progress.bytes)

    def _read(self, path: Path, read: Callable[[], Any], verb: str = "read") -> Any:
        """``read()`` of ``path``, once it is known to be a regular file (a named pipe would
        block the open, a device never end), through ``_guard``."""
        status = self._look_up(path)
        if status is None:
            raise self._damaged(path, "missing")
        if not stat.S_ISREG(status.st_mode):
            raise self._damaged(path, f"{_kind(status.st_mode)}, not a regular file")
        return self._guard(path, read, verb)

    def _guard(self, path: Path, read: Callable[[], Any], verb: str = "read") -> Any:
        """``read()``, any failure of it (truncated, not what it should be: a pickle error,
        garbage JSON, a tensor no check can read, ...) one line naming ``path``; a file that
        cannot be ``verb`` (read, written) for its permissions is intact, and said so."""
        try:
            with warnings.catch_warnings():  # torch's unpickler warns about odd protocols
                warnings.simplefilter("ignore")
                return read()
        except DataError:
            raise
        except FileNotFoundError:
            raise self._damaged(path, "missing") from None
        except OSError as error:
            raise self._inaccessible(path, error, verb) or self._damaged(
                path, f"{type(error).__name__}: {error}") from None
        except Exception as error:  # whatever the damage: one line
            raise self._damaged(path, f"{type(error).__name__}: {error}") from None

    def _inaccessible(self, path: Path, error: OSError, verb: str) -> DataError | None:
        return _inaccessible(path, error, verb, "the interrupted embed's work is intact: ")

    def _damaged(self, path: Path, why: str) -> DataError:
        why = why.strip().splitlines()[0].split(". ")[0] if why.strip() else why  # its gist
        return DataError(f"{path}: damaged ({why}), so the interrupted embed cannot resume; "
                         f"--force starts over")

    def commit(self, progress: Progress) -> None:
        save_checkpoint(self.progress, asdict(progress))  # a full disk: a WriteError

    def remove(self) -> None:
        """The folder removed, or whatever else (a file, a link) is in its place."""
        if self.folder.is_dir() and not self.folder.is_symlink():
            shutil.rmtree(self.folder, ignore_errors=True)
        else:
            self.folder.unlink(missing_ok=True)


def _run(corpus: Path, lengths: np.ndarray, options: EmbedOptions, runner: BilmRunner,
         target: torch.device, staging: Staging, progress: Progress, show: bool) -> None:
    """Embed the batches not done yet, appending each to the staging folder."""
    split = options.splitter()
    window = options.batch_size * SORT_WINDOW_BATCHES
    done = [batch for batch, _ in zip(schedule(lengths, options), range(progress.batches),
                                      strict=False)]
    done_tokens = int(sum(lengths[batch].sum() for batch in done))
    done_sentences = sum(len(batch) for batch in done)
    runner.restore_carried_state(progress.carried)
    batch_number = 0
    with open(staging.vectors, "ab") as sink, progress_display(
            total=int(lengths.sum()), initial=done_tokens, enabled=show, unit="token",
            leave=True) as bar:
        lines = text_lines(corpus)
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
                progress.crc32 = zlib.crc32(data, progress.crc32)
                progress.carried = runner.carried_state()
                staging.commit(progress)
                done_sentences += len(batch)
                bar.update(sum(len(sentence) for sentence in words))
                bar.set_postfix(sentences=f"{done_sentences}/{len(lengths)}", refresh=False)


def _assemble(corpus: Path, lengths: np.ndarray, options: EmbedOptions, num_layers: int,
              dim: int, staging: Staging, settings: dict[str, Any]) -> None:
    """Write the output from ``vectors.bin``, sentences in input order."""
    import h5py

    sizes = _sentence_bytes(lengths, options, num_layers, dim)
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
            for index, line in enumerate(text_lines(corpus)):
                vectors = np.frombuffer(
                    os.pread(source.fileno(), int(sizes[index]), int(starts[index])),
                    dtype=options.dtype).reshape(options.shape(lengths[index], num_layers, dim))
                if options.layout == "sentences":
                    out.file.create_dataset(str(index), data=vectors)
                    sentence_to_index[line.strip()] = str(index)  # the last repeat, as AllenNLP
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
    """``output`` must be a complete embed made with ``settings``: else one line saying what
    it is (not a file, unreadable, damaged, not an embed's) or the settings that differ."""
    import h5py

    try:
        mode = os.stat(output).st_mode
        if not stat.S_ISREG(mode):  # a named pipe would block h5py's open
            raise DataError(f"{output}: {_kind(mode)}, not an embed's HDF5 file; --force "
                            f"replaces it")
        with open(output, "rb"):  # a permission error said as such, not as damage
            pass
    except OSError as error:
        raise _inaccessible(output, error, "read") or DataError(
            f"{output}: cannot read it ({error.strerror or error})") from None
    damaged = DataError(f"{output}: damaged (not a readable HDF5 file), so --recover cannot "
                        f"check it; --force embeds it again")
    try:
        with h5py.File(output, "r") as handle:
            record = handle.attrs.get(SETTINGS_ATTRIBUTE)
    except Exception:  # h5py's errors on a truncated or garbage file vary
        raise damaged from None
    if record is None:
        raise DataError(f"{output} exists and was not made by elmo-exp embed (no "
                        f"{SETTINGS_ATTRIBUTE}); write to another file, or --force replaces it")
    try:
        saved = json.loads(record)
    except (TypeError, ValueError):
        saved = None
    if not isinstance(saved, dict):
        raise DataError(f"{output}: damaged ({SETTINGS_ATTRIBUTE} is not a JSON object); "
                        f"--force embeds it again")
    missing = [key for key in settings if key not in saved]
    if missing:
        raise DataError(f"{output}: damaged ({SETTINGS_ATTRIBUTE} has no "
                        f"{', '.join(map(repr, missing))}); --force embeds it again")
    differences = _differences(saved, settings)
    if differences:
        raise DataError(f"{output}: a finished embed made with {differences}; write to "
                        f"another file, or --force replaces it")


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
    if output.exists() and os.path.samefile(resolve_data_path(input_path), output):
        raise DataError(f"{output}: the input itself; write the vectors to another file")
    if output.is_dir():  # no --force replaces a folder: said before any work
        raise DataError(f"{output}: a folder; name the HDF5 file to write")
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
    # no character cache: memory stays bounded, a recovery computes what a whole run would
    runner = BilmRunner(bilm, state, precision=precision)
    ends = batch_ends(lengths, options, num_layers, dim)
    done = None
    if recover and staging.exists() and staging.has_work():  # a refusal leaves the work as it is
        rows = min(options.batch_size, len(lengths))  # the first batch's: the state carried
        done = staging.resume(settings, ends, lambda carried, batches: _carried_problem(
            runner, carried, batches, rows))
    try:
        if done is None:  # killed before the first record (or no recovery): start afresh
            done = staging.start(settings)
        if done.batches < len(ends) - 1:
            target = resolve_device(device, "--device")
            runner.to(target)
            _run(Path(input_path), lengths, options, runner, target, staging, done, progress)
        _assemble(Path(input_path), lengths, options, num_layers, dim, staging, settings)
    except (WriteError, OSError) as error:  # a full disk: the batches done are kept for --recover
        failure = error if isinstance(error, WriteError) else _write_error(output, error)
        if done is None or done.batches == 0:
            staging.remove()
            raise failure from None
        raise WriteError(f"{failure}; the batches done so far are kept in {staging.folder}: "
                         f"--recover finishes the run") from None
    staging.remove()
    return len(lengths)
