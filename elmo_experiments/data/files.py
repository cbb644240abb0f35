"""Opening data files: transparent ``.gz``, ``ELMO_DATA_DIR`` provenance, sample notices."""

from __future__ import annotations

import errno
import glob
import gzip
import hashlib
import json
import logging
import os
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from elmo_experiments.errors import DataError, WriteError
from elmo_experiments.faults import fault_point

DATA_DIR_VARIABLE = "ELMO_DATA_DIR"
TOO_DEEP = "JSON nested too deeply to read (arrays or objects thousands of levels deep)"
LINE_LIMIT_DOC = "longest line read, in bytes (longer: an error naming it, not a memory blow-up)"


def resolve_data_path(path: str | Path) -> Path:
    """The file to read: ``path`` itself, or ``path + '.gz'`` when only the gzipped one exists."""
    candidate = Path(path).expanduser()
    if candidate.is_file():
        return candidate
    gzipped = candidate.with_name(candidate.name + ".gz")
    if gzipped.is_file():
        return gzipped
    if candidate.exists():
        kind = "a folder" if candidate.is_dir() else "not a regular file (a device, pipe or socket)"
        raise DataError(f"{path}: {kind}, not a data file")
    hint = ""
    if DATA_DIR_VARIABLE not in os.environ:
        hint = f" (set {DATA_DIR_VARIABLE} to the data root)"
    raise DataError(f"{path}: no such data file{hint}")


def file_problem(path: str) -> str | None:
    """A ``Param.check``: the file must exist."""
    return None if Path(path).expanduser().is_file() else f"{path}: no such file"


def data_file_problem(path: str) -> str | None:
    """A ``Param.check``: the data file (or its ``.gz``) must exist."""
    try:
        resolve_data_path(path)
    except DataError as error:
        return str(error)
    return None


def iter_lines(path: str | Path, max_bytes: int | None = None,
               limit_name: str = "max_line_length", *, any_nul: bool = False
               ) -> Iterator[tuple[int, str]]:
    """(line number, text) of a UTF-8 file, gunzipping ``.gz``; a leading BOM is dropped.

    Bytes that are not UTF-8 and corrupt or truncated gzip data raise ``DataError`` naming the
    file and line (decoding line by line keeps the line number exact). So does a line of NUL
    bytes only (what a crash leaves in a file, or a binary file), and with ``any_nul`` a line
    holding any NUL byte (UTF-16 text too); without it a NUL inside text is read as it is
    (``ElmoEmbedder`` keeps such sentences). With ``max_bytes`` a longer line is a
    ``DataError`` too, found without reading the whole line into memory (``limit_name``: the
    setting that raises the limit).
    """
    resolved = resolve_data_path(path)
    number = 0
    with (gzip.open(resolved, "rb") if resolved.suffix == ".gz" else open(resolved, "rb")) as raw:
        try:
            for number, data in enumerate(_lines(raw, max_bytes), start=1):
                if data is None:
                    raise DataError(f"{resolved}:{number}: line longer than {max_bytes:,} "
                                    f"bytes (raise {limit_name} to read it)")
                # the int 0, not b"\0": a plain memchr, about 1 ms a MB (b"\0" costs 8 times that)
                if 0 in data and (any_nul or not data.strip(b"\0 \t\r\n")):
                    raise DataError(f"{resolved}:{number}: NUL bytes, not text (a binary or "
                                    f"damaged file, or UTF-16?)")
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise DataError(f"{resolved}:{number}: not UTF-8 text (byte "
                                    f"{data[error.start]:#04x} at column {error.start + 1})"
                                    ) from None
                yield number, text.removeprefix("\ufeff") if number == 1 else text
        except (OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError
            raise DataError(f"{resolved}:{number + 1}: cannot read the file ({error})") from None


def _lines(raw: Any, max_bytes: int | None) -> Iterator[bytes | None]:
    """The file's lines; None for a line over ``max_bytes`` (then no more)."""
    if max_bytes is None:
        yield from raw
        return
    while True:
        data = raw.readline(max_bytes + 1)
        if not data:
            return
        if len(data) > max_bytes and not data.endswith(b"\n"):
            yield None
            return
        yield data


def cache_root() -> Path:
    """Where downloaded biLMs and extracted archives are kept (``ELMO_CACHE_DIR``)."""
    return Path(os.environ.get("ELMO_CACHE_DIR", Path.home() / ".cache" / "elmo-experiments"))


def sha1_of(*paths: str | Path) -> str:
    """SHA-1 over the bytes of the given files, in order."""
    digest = hashlib.sha1()
    for path in paths:
        with open(path, "rb") as handle:
            for block in iter(lambda h=handle: h.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str | Path) -> str:
    """SHA-1 of a data file's bytes (recorded in the run's data provenance)."""
    return sha1_of(resolve_data_path(path))


def is_embedded_sample(path: str | Path) -> bool:
    """Whether ``path`` points into a task's embedded ``sample/`` folder
    (``reproduction/<task>/sample/``; ``tasks/`` was its earlier name)."""
    parts = Path(path).resolve().parts
    return ("reproduction" in parts or "tasks" in parts) and "sample" in parts


def parse_json(data: bytes | str, where: str | Path) -> Any:
    """The JSON value of ``data`` (bytes: UTF-8, a leading BOM dropped). Bytes that are not
    UTF-8, text that is not JSON, and JSON nested deeper than Python's parser can follow (a
    ``RecursionError``) are a one-line ``DataError`` naming ``where`` (and the line)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise DataError(f"{where}: not UTF-8 text (byte {error.start})") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError as error:
        raise DataError(f"{where}:{error.lineno}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise DataError(f"{where}: {TOO_DEEP}") from None


def load_data_json(path: str | Path) -> Any:
    """The parsed JSON of a ``.json`` or ``.json.gz`` data file (a leading BOM dropped);
    unreadable, corrupt, non-UTF-8, invalid or too deeply nested JSON is a one-line
    ``DataError`` naming it."""
    path = Path(path)
    try:
        with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as handle:
            raw = handle.read()
    except (OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError
        raise DataError(f"{path}: cannot read the file ({error})") from None
    return parse_json(raw, path)


def data_path_problem(path: str) -> str | None:
    """What is wrong with a data path before any reader sees it: a file (or its ``.gz``), a
    folder, a glob that matches, or ``FOLDER#PART`` (a reader's selection inside a folder)."""
    try:
        resolve_data_path(path)
        return None
    except DataError as error:
        problem = str(error)
    base = os.path.expanduser(path.rsplit("#", 1)[0] if "#" in path else path)
    if Path(base).is_dir() or glob.glob(base, recursive=True):
        return None
    return problem


def provenance(paths: dict[str, str | None],
               files_of: dict[str, Callable[[str], list[Path]]] | None = None
               ) -> dict[str, object]:
    """What data a run used: the data root, and per split the file, its size and SHA-1. A
    split whose reader reads several files (``files_of[split](path)``: a folder, a glob) gets
    their count, total size and one SHA-1 over them in reading order."""
    splits: dict[str, object] = {}
    for split, path in paths.items():
        if path is None:
            continue
        lister = (files_of or {}).get(split)
        if lister is None:
            resolved = resolve_data_path(path)
            splits[split] = {
                "path": str(resolved.resolve()),
                "bytes": resolved.stat().st_size,
                "sha1": file_digest(resolved),
                "embedded_sample": is_embedded_sample(resolved),
            }
            continue
        files = lister(path)
        splits[split] = {
            "path": str(path), "files": len(files),
            "bytes": sum(f.stat().st_size for f in files),
            "sha1": sha1_of(*files),
            "embedded_sample": bool(files) and all(is_embedded_sample(f) for f in files),
        }
    return {"data_dir": os.environ.get(DATA_DIR_VARIABLE), "splits": splits}


def _temporary_name(folder: Path, prefix: str) -> Path:
    """A name in ``folder`` that nothing has yet: ``PREFIX`` + 8 random characters (the
    ``.NAME.XXXXXXXX`` shape that ``remove_temporaries`` recognises)."""
    while True:
        candidate = folder / f"{prefix}{secrets.token_hex(4)}"
        if not os.path.lexists(candidate):
            return candidate


def create_temporary(folder: Path, prefix: str) -> Path:
    """A new empty file in ``folder`` with the permissions of the user's umask (``0666 &
    ~umask``, as ``open`` gives; ``tempfile.mkstemp`` would make it 0600)."""
    while True:
        candidate = _temporary_name(folder, prefix)
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:  # taken between the look and the creation
            continue
        return candidate


def create_staging_folder(folder: Path) -> Path:
    """A new empty folder beside ``folder`` (``.NAME.XXXXXXXX``) with the permissions of the
    user's umask, in which to build ``folder`` before ``replace_folder`` renames it in."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    while True:
        candidate = _temporary_name(folder.parent, f".{folder.name}.")
        try:
            os.mkdir(candidate, 0o777)
        except FileExistsError:
            continue
        return candidate


@contextmanager
def staged_folder(folder: Path) -> Iterator[Path]:
    """A new staging folder in which to build ``folder``, renamed in when the block ends and
    removed whatever happens. A failed write inside names its place in ``folder``, not the
    staging folder's temporary name."""
    staging = create_staging_folder(folder)
    try:
        try:
            yield staging
        except WriteError as error:
            raise WriteError(str(error).replace(str(staging), str(folder))) from None
        replace_folder(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def fsync_path(path: str | Path) -> None:
    """Flush a file's data, or a folder's entries (renames into it), to the disk."""
    directory = Path(path).is_dir()
    descriptor = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(descriptor)
    except OSError as error:
        if not (directory and error.errno in (errno.EINVAL, errno.ENOTSUP)):
            raise  # some file systems cannot sync a folder: nothing more to do there
    finally:
        os.close(descriptor)


def atomic_write(path: str | Path, write: Callable[[str], None], durable: bool = True) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place,
    so readers never see a half-written file and an interruption leaves the old one. This is
    the one way the framework writes a file: with the user's umask, and (``durable``) the file
    synced to the disk before the rename and the folder after it, so a power loss leaves the
    old file or the new one, never an empty one. ``durable=False`` only for caches whose
    entries are checked when read.

    A failed write (a full disk, no permission) is a ``WriteError`` naming ``path``; the
    temporary file is removed and the previous ``path`` is left as it was.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = str(create_temporary(path.parent, f".{path.name}."))
    except OSError as error:
        raise write_error(path, error) from None
    try:
        write(tmp)
        if durable:
            fsync_path(tmp)
        fault_point(f"atomic_write:{path.name}")
        os.replace(tmp, path)
        if durable:
            fsync_path(path.parent)
    except OSError as error:
        raise write_error(path, error) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: str | Path, text: str) -> None:
    """``text`` in UTF-8 to ``path`` through ``atomic_write``."""
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def save_array(path: str | Path, array: Any) -> None:
    """A numpy array as ``.npy`` through ``atomic_write``."""
    import numpy as np

    def write(tmp: str) -> None:
        with open(tmp, "wb") as handle:  # a handle: np.save would add ".npy" to a name
            np.save(handle, array)

    atomic_write(path, write)


def replace_folder(staging: Path, folder: Path) -> None:
    """Rename the finished ``staging`` folder (from ``create_staging_folder``) to ``folder``,
    replacing any old one, and sync the parent folder so the rename survives a power loss.
    The files inside must have been written through ``atomic_write`` (synced)."""
    fsync_path(staging)
    old = None
    if folder.exists():
        old = _temporary_name(folder.parent, f".{folder.name}.")
        os.replace(folder, old)
    os.replace(staging, folder)
    fsync_path(folder.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_error(path: Path, error: BaseException) -> WriteError:
    """A one-line ``WriteError`` for ``path``, naming a full disk when the disk is full."""
    reason = getattr(error, "strerror", None) or str(error)
    try:
        free = shutil.disk_usage(path.parent if path.parent.exists() else ".").free
    except OSError:
        free = None
    code = getattr(error, "errno", None)  # none from some writers (torch's, HDF5's): then a
    if code in (errno.ENOSPC, errno.EDQUOT) or (  # nearly full disk is the likely cause
            code is None and free is not None and free < 1 << 20):
        reason = f"the disk is full ({reason})"
    return WriteError(f"{path}: cannot write it: {reason}; an earlier version of it, if any, "
                      f"is intact")


def write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """One string per line (vocabularies), written atomically; ``read_lines`` reads it back."""
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def read_lines(path: str | Path) -> list[str]:
    """The lines ``write_lines`` wrote; a missing or non-UTF-8 file is a ``DataError``."""
    try:
        return Path(path).read_text(encoding="utf-8").split("\n")[:-1]
    except FileNotFoundError:
        raise DataError(f"{path}: missing") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text (byte {error.start})") from None


def read_json(path: str | Path, kind: type = dict) -> Any:
    """A JSON file whose top level is a ``kind`` (dict or list); anything else (missing,
    truncated, not JSON, too deeply nested, another shape) is a ``DataError`` naming the file
    (and the line)."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: missing") from None
    try:
        value = parse_json(raw, path)
    except DataError as error:
        raise DataError(f"{error}; the file is damaged") from None
    if not isinstance(value, kind):
        raise DataError(f"{path}: expected a JSON {'object' if kind is dict else 'list'}, got "
                        f"{type(value).__name__}; the file is damaged")
    return value


def warn_if_sample(paths: dict[str, str | None]) -> bool:
    """Print a loud notice when the run uses an embedded sample instead of real data."""
    samples = [p for p in paths.values() if p and is_embedded_sample(p)]
    if samples:
        bar = "!" * 78
        logging.getLogger("elmo_experiments").warning(
            "%s\n!! Using the EMBEDDED SAMPLE data (%s).\n!! Its numbers mean nothing; set "
            "ELMO_DATA_DIR=/path/to/data for real runs.\n%s", bar, ", ".join(samples), bar)
    return bool(samples)
