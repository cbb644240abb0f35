"""atomic_write: all or nothing, with the usual file permissions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elmo_experiments.data.files import atomic_write, read_lines, write_lines


def test_atomic_write_replaces_and_uses_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "out" / "vocab.txt"
    old = os.umask(0o022)
    try:
        write_lines(path, ["a", "b c"])
    finally:
        os.umask(old)
    assert read_lines(path) == ["a", "b c"]
    assert path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["vocab.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text("old")

    def fail(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, fail)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]
