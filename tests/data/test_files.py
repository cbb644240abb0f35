"""atomic_write: all or nothing, with the usual file permissions; JSON files that cannot be
read are one-line errors naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elmo_experiments.data.files import (
    atomic_write,
    load_data_json,
    read_json,
    read_lines,
    write_lines,
)
from elmo_experiments.errors import DataError


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


DEEP = "[" * 100_000 + "]" * 100_000  # json.loads: RecursionError
TOO_DEEP = "JSON nested too deeply to read (arrays or objects thousands of levels deep)"


def test_deeply_nested_data_json_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "train.json"
    path.write_text('{"data": ' + DEEP + "}")
    with pytest.raises(DataError) as info:
        load_data_json(path)
    assert str(info.value) == f"{path}: {TOO_DEEP}"


def test_deeply_nested_or_invalid_run_json_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(DEEP)
    with pytest.raises(DataError) as info:
        read_json(path)
    assert str(info.value) == f"{path}: {TOO_DEEP}; the file is damaged"
    path.write_text('{"a": 1,\n')
    with pytest.raises(DataError) as info:
        read_json(path)
    assert str(info.value) == (f"{path}:2: not valid JSON (Expecting property name enclosed in "
                               f"double quotes); the file is damaged")
