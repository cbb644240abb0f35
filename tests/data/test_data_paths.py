"""Data paths that name several files (a folder, a glob, a split of a folder): checked before
reading, and hashed in the run's provenance as the reader lists them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from elmo_experiments.data.files import data_path_problem, provenance


def test_a_data_path_may_be_a_file_folder_glob_or_a_folders_part(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.conll").write_text("x\n")
    assert data_path_problem(str(folder / "a.conll")) is None
    assert data_path_problem(str(folder)) is None
    assert data_path_problem(str(folder / "*.conll")) is None
    assert data_path_problem(f"{folder}#train") is None
    for missing in (folder / "b.conll", folder / "*.txt", f"{tmp_path / 'none'}#train"):
        assert "no such data file" in data_path_problem(str(missing))


def test_provenance_hashes_every_file_a_reader_lists(tmp_path: Path) -> None:
    files = [tmp_path / "a.conll", tmp_path / "b.conll"]
    files[0].write_text("one\n")
    files[1].write_text("two\n")
    record = provenance({"train": str(tmp_path), "validation": str(files[0])},
                        {"train": lambda path: files})
    train = record["splits"]["train"]
    assert train["files"] == 2 and train["bytes"] == 8
    assert train["sha1"] == hashlib.sha1(b"one\ntwo\n").hexdigest()
    assert record["splits"]["validation"]["sha1"] == hashlib.sha1(b"one\n").hexdigest()
