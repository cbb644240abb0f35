"""The files a component reads besides its config (biLM weights, word vectors), declared with
``register(..., external_files=ExternalFiles(...))``: ``run.json`` records them with their
digests, and ``model.tar.gz`` packs them (or names them, when a name needs no file).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Found:
    """The files one component config reads, resolved, and their digest."""

    files: dict[str, Path]  # the name of its copy in an archive -> the file
    digest: str  # as the component's own check computes it
    record: dict[str, str]  # its entry in ``run.json``


@dataclass(frozen=True)
class ExternalFiles:
    """How a component declares the files it reads.

    ``group``: the key listing them in ``run.json`` (and in ``archive.json`` when packed).
    ``find``: the files a config's params name (None: it reads none). ``recorded``: a
    ``run.json`` entry back as ``Found`` without reading the files again (None: they are
    gone). ``name``: the name a config uses that needs no file in an archive (a shipped or
    released biLM), or None. ``digest_of``: the digest a name has here (checked on load).
    ``packed``: point params at the folder of the archived copies; None: not archived, and
    ``unpacked`` sets params so that nothing is read again when the model is loaded.
    ``copies``: the names of the archived copies (``Found.files``' keys) of a packed one.
    ``label``: what one is called in messages ("biLM").
    """

    group: str
    find: Callable[[dict[str, Any]], Found | None]
    label: str = "file"
    copies: tuple[str, ...] = ()
    recorded: Callable[[dict[str, Any]], Found | None] | None = None
    name: Callable[[dict[str, Any]], str | None] | None = None
    digest_of: Callable[[str], str] | None = None
    packed: Callable[[dict[str, Any], Path], None] | None = None
    unpacked: Callable[[dict[str, Any]], None] | None = None
