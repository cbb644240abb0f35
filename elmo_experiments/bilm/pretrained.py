"""Where biLM weights come from: a directory, a biLM shipped inside the package (``gutenberg``),
or a known released name downloaded once into a local cache.

A directory with a ``SHA256SUMS`` file (every export writes one; the shipped biLMs have one) is
checked against it when loaded, once per process: a damaged copy is a one-line error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from elmo_experiments.bilm.weights import OPTIONS_FILE, WEIGHTS_FILE
from elmo_experiments.data.files import sha1_of, sha256_of
from elmo_experiments.errors import DataError

_BASE = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo"


@dataclass(frozen=True)
class Released:
    """A released biLM: its download addresses and, where known, SHA-1 checksums."""

    folder: str
    stem: str
    options_sha1: str | None = None
    weights_sha1: str | None = None

    def url(self, kind: str) -> str:
        return f"{_BASE}/{self.folder}/{self.stem}_{kind}"


KNOWN = {
    "small": Released("2x1024_128_2048cnn_1xhighway", "elmo_2x1024_128_2048cnn_1xhighway"),
    "medium": Released("2x2048_256_2048cnn_1xhighway", "elmo_2x2048_256_2048cnn_1xhighway"),
    "original": Released("2x4096_512_2048cnn_2xhighway", "elmo_2x4096_512_2048cnn_2xhighway"),
    "5.5B": Released("2x4096_512_2048cnn_2xhighway_5.5B",
                     "elmo_2x4096_512_2048cnn_2xhighway_5.5B"),
}


SHIPPED_ROOT = Path(__file__).resolve().parent / "models"  # biLMs that ship with the package
CHECKSUMS_FILE = "SHA256SUMS"


def shipped() -> dict[str, Path]:
    """Name -> folder of every biLM shipped inside the package (a folder with a model card)."""
    if not SHIPPED_ROOT.is_dir():
        return {}
    return {p.name: p for p in sorted(SHIPPED_ROOT.iterdir())
            if (p / "MODEL_CARD.md").is_file() and (p / OPTIONS_FILE).is_file()}


def write_checksums(directory: str | Path) -> Path:
    """``SHA256SUMS`` over the files of ``directory`` (``sha256sum -c`` reads it)."""
    from elmo_experiments.data.files import atomic_write

    directory = Path(directory)
    names = sorted(p.name for p in directory.iterdir()
                   if p.is_file() and p.name != CHECKSUMS_FILE and not p.name.startswith("."))
    text = "".join(f"{sha256_of(directory / n)}  {n}\n" for n in names)
    atomic_write(directory / CHECKSUMS_FILE, lambda tmp: Path(tmp).write_text(text))
    return directory / CHECKSUMS_FILE


_verified: set[tuple[str, int, int]] = set()


def verify_checksums(directory: Path) -> None:
    """Check every file ``SHA256SUMS`` lists (no-op without one; once per file version)."""
    listing = directory / CHECKSUMS_FILE
    if not listing.is_file():
        return
    for number, line in enumerate(listing.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        expected, _, name = line.partition("  ")
        if len(expected) != 64 or not name or "/" in name:
            raise DataError(f"{listing}:{number}: not a `sha256sum` line (a 64-digit digest, "
                            f"two spaces, a file name); the listing is damaged")
        path = directory / name
        if not path.is_file():
            raise DataError(f"{listing}:{number}: {name} is missing")
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if key in _verified:
            continue
        if sha256_of(path) != expected:
            raise DataError(f"{path}: SHA-256 differs from {listing} (damaged or replaced "
                            "file; reinstall the package or re-export the biLM)")
        _verified.add(key)


def cache_root() -> Path:
    return Path(os.environ.get("ELMO_CACHE_DIR", Path.home() / ".cache" / "elmo-experiments"))


def _download(url: str, target: Path, sha1: str | None, folder: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
    os.close(handle)
    try:
        with urllib.request.urlopen(url, timeout=30) as response, open(tmp, "wb") as out:
            shutil.copyfileobj(response, out)
        if sha1 is not None and sha1_of(tmp) != sha1:
            raise DataError(f"{url}: checksum mismatch (expected {sha1})")
        os.replace(tmp, target)
    except OSError as error:
        raise DataError(f"cannot download {url} ({error}); put {OPTIONS_FILE} and "
                        f"{WEIGHTS_FILE} into {folder}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _local_folder(spec: str) -> Path:
    """The folder ``spec`` names: a directory, or a shipped biLM's (may not exist)."""
    path = Path(spec).expanduser()
    if not path.is_dir():
        path = shipped().get(spec, path)
    return path


def weights_problem(spec: str) -> str | None:
    """What makes ``spec`` unusable as biLM weights, checked without reading or downloading:
    a directory lacking a file, or neither a directory nor a known name; None if usable."""
    path = _local_folder(spec)
    if path.is_dir():
        lacking = [n for n in (OPTIONS_FILE, WEIGHTS_FILE) if not (path / n).is_file()]
        return f"{path}: biLM directory lacks {lacking[0]}" if lacking else None
    if spec in KNOWN:
        return None
    known = ", ".join([*shipped(), *sorted(KNOWN)])
    return (f"{spec}: not a biLM directory (options.json + weights.hdf5) nor a known name "
            f"({known})")


def resolve_weights(spec: str) -> tuple[Path, Path]:
    """(options.json, weights.hdf5) for a directory, a shipped biLM or a released name
    (downloaded once)."""
    problem = weights_problem(spec)
    if problem:
        raise DataError(problem)
    path = _local_folder(spec)
    if path.is_dir():
        verify_checksums(path)
        return path / OPTIONS_FILE, path / WEIGHTS_FILE
    released = KNOWN[spec]
    folder = cache_root() / spec
    options, weights = folder / OPTIONS_FILE, folder / WEIGHTS_FILE
    if not options.is_file():
        _download(released.url("options.json"), options, released.options_sha1, folder)
    if not weights.is_file():
        _download(released.url("weights.hdf5"), weights, released.weights_sha1, folder)
    return options, weights
