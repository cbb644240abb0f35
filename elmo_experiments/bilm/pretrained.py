"""Where biLM weights come from: a directory, a biLM shipped inside the package (``gutenberg``),
or a known released name downloaded once into a local cache.

A directory with a ``SHA256SUMS`` file (every export writes one; the shipped biLMs have one) is
checked against it when loaded, once per process: a damaged copy is a one-line error. A shipped
biLM is checked against the digests the package pins in code (``shipped_digests.py``, written by
``tasks/bilm/ship.py``) as well, so deleting its listing does not turn the check off.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from elmo_experiments.bilm import shipped_digests
from elmo_experiments.bilm.weights import OPTIONS_FILE, WEIGHTS_FILE
from elmo_experiments.data.files import file_problem, sha1_of, sha256_of
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
PINS_FILE = Path(shipped_digests.__file__).resolve()  # their files' SHA-256, pinned in code
SHIPPED_SHA256: dict[str, dict[str, str]] = shipped_digests.SHIPPED_SHA256
CHECKSUMS_FILE = "SHA256SUMS"


def shipped() -> dict[str, Path]:
    """Name -> folder of every biLM shipped inside the package (a folder with a model card)."""
    if not SHIPPED_ROOT.is_dir():
        return {}
    return {p.name: p for p in sorted(SHIPPED_ROOT.iterdir())
            if (p / "MODEL_CARD.md").is_file() and (p / OPTIONS_FILE).is_file()}


def folder_digests(directory: str | Path) -> dict[str, str]:
    """File name -> SHA-256 of every file of a biLM folder but ``SHA256SUMS`` and hidden ones:
    what ``SHA256SUMS`` lists, and what the package pins for a shipped biLM."""
    directory = Path(directory)
    return {p.name: sha256_of(p) for p in sorted(directory.iterdir())
            if p.is_file() and p.name != CHECKSUMS_FILE and not p.name.startswith(".")}


def write_checksums(directory: str | Path, names: list[str] | None = None) -> Path:
    """``SHA256SUMS`` over the files of ``directory`` (``sha256sum -c`` reads it), or over
    ``names`` only."""
    from elmo_experiments.data.files import atomic_write_text

    directory = Path(directory)
    digests = folder_digests(directory) if names is None else {
        n: sha256_of(directory / n) for n in sorted(names)}
    atomic_write_text(directory / CHECKSUMS_FILE,
                      "".join(f"{sha}  {name}\n" for name, sha in digests.items()))
    return directory / CHECKSUMS_FILE


def render_pins(pins: dict[str, dict[str, str]]) -> str:
    """The source of ``shipped_digests.py`` pinning ``pins`` (biLM name -> file -> SHA-256)."""
    lines = ['"""SHA-256 of every file of the biLMs shipped inside the package '
             "(``bilm/models/NAME``),",
             "checked whenever one is loaded, whether or not its SHA256SUMS is there. Written by",
             "``tasks/bilm/ship.py``; tests/bilm/test_shipped_gutenberg.py checks it against the",
             'files, so a biLM shipped anew cannot keep its old pin. Do not edit by hand."""', "",
             "SHIPPED_SHA256: dict[str, dict[str, str]] = {"]
    for name, files in sorted(pins.items()):
        lines.append(f"    {json.dumps(name)}: {{")
        lines.extend(f"        {json.dumps(file)}: {json.dumps(sha)},"
                     for file, sha in sorted(files.items()))
        lines.append("    },")
    return "\n".join([*lines, "}", ""])


_verified: set[tuple[str, int, int, str]] = set()


def _check_digest(path: Path, expected: str, against: str, hint: str) -> None:
    """``path`` must have SHA-256 ``expected`` (from ``against``); once per file version."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, expected)
    if key in _verified:
        return
    if sha256_of(path) != expected:
        raise DataError(f"{path}: SHA-256 differs from {against} (damaged or replaced file; "
                        f"{hint})")
    _verified.add(key)


def verify_checksums(directory: Path,
                     hint: str = "reinstall the package or re-export the biLM") -> None:
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
        _check_digest(path, expected, str(listing), hint)


def verify_shipped(folder: Path) -> None:
    """Check a shipped biLM's files against the digests the package pins (``PINS_FILE``)."""
    pins = SHIPPED_SHA256.get(folder.name)
    if pins is None:
        raise DataError(f"{folder}: the package pins no SHA-256 for the shipped biLM "
                        f"{folder.name!r} (in {PINS_FILE}; tasks/bilm/ship.py writes them)")
    for name, expected in sorted(pins.items()):
        path = folder / name
        if not path.is_file():
            raise DataError(f"{path}: missing from the shipped biLM {folder.name!r}; reinstall "
                            "the package")
        _check_digest(path, expected, f"the digest pinned in {PINS_FILE.name}",
                      "reinstall the package")


def _is_shipped(folder: Path) -> bool:
    return folder.resolve().parent == SHIPPED_ROOT.resolve() and folder.name in shipped()


def cache_root() -> Path:
    return Path(os.environ.get("ELMO_CACHE_DIR", Path.home() / ".cache" / "elmo-experiments"))


def _download(url: str, target: Path, sha1: str | None, hint: str) -> None:
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
        raise DataError(f"cannot download {url} ({error}); {hint}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _local_folder(spec: str) -> Path:
    """The folder ``spec`` names: a directory, or a shipped biLM's (may not exist)."""
    path = Path(spec).expanduser()
    if not path.is_dir():
        path = shipped().get(spec, path)
    return path


def folder_files(folder: Path) -> tuple[Path, Path] | str:
    """(options, weights) in ``folder``: ``options.json`` + ``weights.hdf5``, or else the one
    ``*options.json`` and the one ``*weights.hdf5`` under any names (the released files keep
    theirs); a one-line problem when either is missing or ambiguous."""
    found: list[Path] = []
    for canonical, pattern in ((OPTIONS_FILE, "*options.json"), (WEIGHTS_FILE, "*weights.hdf5")):
        if (folder / canonical).is_file():
            found.append(folder / canonical)
            continue
        matches = sorted(p for p in folder.glob(pattern) if p.is_file())
        if not matches:
            return f"{folder}: biLM directory lacks {canonical} (or any {pattern})"
        if len(matches) > 1:
            return (f"{folder}: biLM directory holds several {pattern} "
                    f"({', '.join(p.name for p in matches)}); give options_file and "
                    f"weight_file instead")
        found.append(matches[0])
    return found[0], found[1]


def weights_problem(spec: str) -> str | None:
    """What makes ``spec`` unusable as biLM weights, checked without reading or downloading:
    a directory lacking a file, or neither a directory nor a known name; None if usable."""
    path = _local_folder(spec)
    if path.is_dir():
        files = folder_files(path)
        return files if isinstance(files, str) else None
    if spec in KNOWN:
        return None
    known = ", ".join([*shipped(), *sorted(KNOWN)])
    return (f"{spec}: not a biLM directory (options.json + weights.hdf5) nor a known name "
            f"({known})")


def source_problem(params: dict[str, object]) -> str | None:
    """A component check: biLM weights come from ``weights`` or from ``options_file`` +
    ``weight_file`` (AllenNLP's names), exactly one of the two."""
    pair = [params.get("options_file"), params.get("weight_file")]
    if params.get("weights") is not None:
        return "give weights or options_file + weight_file, not both" if any(pair) else None
    if not all(pair):
        return ("biLM weights missing: give weights (a directory or a known name) or both "
                "options_file and weight_file")
    return None


def resolve_bilm(weights: str | None = None, options_file: str | None = None,
                 weight_file: str | None = None) -> tuple[Path, Path]:
    """(options, weights) from a ``weights`` spec, or from the two files named directly."""
    problem = source_problem({"weights": weights, "options_file": options_file,
                              "weight_file": weight_file})
    if problem:
        raise DataError(problem)
    if weights is not None:
        return resolve_weights(weights)
    assert options_file is not None and weight_file is not None
    for name in (options_file, weight_file):
        problem = file_problem(name)
        if problem:
            raise DataError(problem)
    return Path(options_file).expanduser(), Path(weight_file).expanduser()


def resolve_weights(spec: str) -> tuple[Path, Path]:
    """(options, weights) for a directory, a shipped biLM or a released name (downloaded once,
    kept under the released files' names)."""
    problem = weights_problem(spec)
    if problem:
        raise DataError(problem)
    path = _local_folder(spec)
    if path.is_dir():
        if _is_shipped(path):
            verify_shipped(path)
        verify_checksums(path)
        files = folder_files(path)
        assert not isinstance(files, str)
        return files
    released = KNOWN[spec]
    folder = cache_root() / spec
    options = folder / f"{released.stem}_options.json"
    weights = folder / f"{released.stem}_weights.hdf5"
    if (folder / OPTIONS_FILE).is_file() and (folder / WEIGHTS_FILE).is_file():
        return folder / OPTIONS_FILE, folder / WEIGHTS_FILE  # a cache from before
    hint = f"offline? put {options.name} and {weights.name} into {folder}"
    if not options.is_file():
        _download(released.url("options.json"), options, released.options_sha1, hint)
    if not weights.is_file():
        _download(released.url("weights.hdf5"), weights, released.weights_sha1, hint)
    return options, weights
