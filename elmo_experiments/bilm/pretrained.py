"""Where biLM weights come from: a directory, a biLM shipped inside the package (``gutenberg``),
or a known released name downloaded once into a local cache (by ``elmo-exp data download``'s
resuming, SHA-256-checked ``fetch``; its layout checked against its options, and its digests,
published or else recorded at the first download, checked at every later load).

A directory with a ``SHA256SUMS`` file (every export writes one; the shipped biLMs have one) is
checked against it when loaded, once per process: a damaged copy is a one-line error. A shipped
biLM is checked against the digests the package pins in code (``shipped_digests.py``, written by
``reproduction/bilm/ship.py``) as well, so deleting its listing does not turn the check off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from elmo_experiments.bilm import shipped_digests
from elmo_experiments.bilm.weights import OPTIONS_FILE, WEIGHTS_FILE, check_weight_file
from elmo_experiments.data.files import cache_root, file_problem, sha256_of
from elmo_experiments.errors import DataError

_BASE = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo"


@dataclass(frozen=True)
class Released:
    """A released biLM: its download addresses and, where published, SHA-256 digests (None:
    the digests are recorded at the first download and checked from then on)."""

    folder: str
    stem: str
    options_sha256: str | None = None
    weights_sha256: str | None = None

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


def write_checksums(directory: str | Path, digests: dict[str, str] | None = None) -> Path:
    """``SHA256SUMS`` over the files of ``directory`` (``sha256sum -c`` reads it), or listing
    ``digests`` (file name -> SHA-256) only."""
    from elmo_experiments.data.files import atomic_write_text

    directory = Path(directory)
    digests = folder_digests(directory) if digests is None else dict(sorted(digests.items()))
    atomic_write_text(directory / CHECKSUMS_FILE,
                      "".join(f"{sha}  {name}\n" for name, sha in digests.items()))
    return directory / CHECKSUMS_FILE


def render_pins(pins: dict[str, dict[str, str]]) -> str:
    """The source of ``shipped_digests.py`` pinning ``pins`` (biLM name -> file -> SHA-256)."""
    lines = ['"""SHA-256 of every file of the biLMs shipped inside the package '
             "(``bilm/models/NAME``),",
             "checked whenever one is loaded, whether or not its SHA256SUMS is there. Written by",
             "``reproduction/bilm/ship.py``; tests/bilm/test_shipped_gutenberg.py checks it "
             "against the",
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
                        f"{folder.name!r} (in {PINS_FILE}; reproduction/bilm/ship.py writes them)")
    for name, expected in sorted(pins.items()):
        path = folder / name
        if not path.is_file():
            raise DataError(f"{path}: missing from the shipped biLM {folder.name!r}; reinstall "
                            "the package")
        _check_digest(path, expected, f"the digest pinned in {PINS_FILE.name}",
                      "reinstall the package")


def _is_shipped(folder: Path) -> bool:
    return folder.resolve().parent == SHIPPED_ROOT.resolve() and folder.name in shipped()


def _download(url: str, target: Path, sha256: str | None, hint: str) -> str:
    """``url`` to ``target`` by the data download's ``fetch`` (resumed, with progress, checked
    against ``sha256`` if published); its SHA-256."""
    from elmo_experiments.data.download import fetch

    return fetch(url, target, sha256, hint=hint,
                 changed_hint="the published digest of the release; try again later")


def _released(spec: str) -> tuple[Path, Path]:
    """(options, weights) of released biLM ``spec`` in the cache, downloaded if missing, then
    trusted: their SHA-256 equal to the published ones, and to those recorded in the cache's
    ``SHA256SUMS`` at the first download (trust on first use); a first use checks the HDF5
    layout against the options before it records them."""
    released = KNOWN[spec]
    folder = cache_root() / spec
    files = folder / OPTIONS_FILE, folder / WEIGHTS_FILE  # a cache from before
    pins = {files[0]: None, files[1]: None}
    if not all(p.is_file() for p in files):
        files = folder / f"{released.stem}_options.json", folder / f"{released.stem}_weights.hdf5"
        pins = {files[0]: released.options_sha256, files[1]: released.weights_sha256}
    fetched: dict[str, str] = {}
    hint = f"offline? put {files[0].name} and {files[1].name} into {folder}"
    for (path, sha256), kind in zip(pins.items(), ("options.json", "weights.hdf5"), strict=True):
        if not path.is_file():
            fetched[path.name] = _download(released.url(kind), path, sha256, hint)
        elif sha256 is not None:
            _check_digest(path, sha256, f"the published digest of {spec}",
                          "delete it to download it again")
    listing = folder / CHECKSUMS_FILE
    recorded = {line.partition("  ")[2] for line in listing.read_text().splitlines()} \
        if listing.is_file() and not fetched else set()
    if {p.name for p in files} <= recorded:
        verify_checksums(folder, "delete it to download it again")
        return files
    check_weight_file(*files)  # first use: only a biLM that fits its options is trusted
    write_checksums(folder, {p.name: fetched.get(p.name) or sha256_of(p) for p in files})
    return files


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
    return _released(spec)
