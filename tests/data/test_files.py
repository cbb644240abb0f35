"""atomic_write: all or nothing, synced to the disk, with the usual file permissions; the one
way the package writes its files. JSON files that cannot be read are one-line errors naming the
file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from elmo_experiments.data.files import (
    atomic_write,
    create_staging_folder,
    load_data_json,
    read_json,
    read_lines,
    replace_folder,
    resolve_data_path,
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


def test_atomic_write_syncs_the_file_renames_then_syncs_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        target = os.readlink(f"/proc/self/fd/{descriptor}")
        events.append(("fsync", "folder" if os.path.isdir(target) else Path(target).name[:9]))
        real_fsync(descriptor)

    def replace(source: str, target: str) -> None:
        events.append(("replace", Path(target).name))
        real_replace(source, target)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to name the synced files")
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    atomic_write(tmp_path / "best.pt", lambda tmp: Path(tmp).write_bytes(b"weights"))
    assert events == [("fsync", ".best.pt."), ("replace", "best.pt"), ("fsync", "folder")]
    assert (tmp_path / "best.pt").read_bytes() == b"weights"


def test_a_staged_folder_replaces_the_old_one_with_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "vocabulary"
    folder.mkdir()
    (folder / "old.txt").write_text("old")
    old = os.umask(0o022)
    try:
        staging = create_staging_folder(folder)
        write_lines(staging / "tokens.txt", ["a"])
        replace_folder(staging, folder)
    finally:
        os.umask(old)
    assert [p.name for p in folder.iterdir()] == ["tokens.txt"]
    assert folder.stat().st_mode & 0o777 == 0o755  # not mkdtemp's 0700
    assert [p.name for p in tmp_path.iterdir()] == ["vocabulary"]


# Writing calls that must only ever write an atomic_write temporary (``tmp``), the open
# ``handle`` of one, or a memory ``buffer``; the exceptions say why they may write directly.
WRITES = re.compile(r"\.write_text\(|\.write_bytes\(|\bopen\([^)]*[\"'][wax]b?[\"']|json\.dump\(|"
                    r"np\.save\(|torch\.save\(|h5py\.File\([^)]*[\"'][wax][\"']|\.savefig\(")
DIRECT_WRITERS = {
    "data/files.py",  # the atomic path itself
    "training/callbacks.py",  # log.jsonl: an append-only log
    "analysis/static_vectors.py",  # the tokenised corpus, in a temporary folder
    "data/hdf5_output.py",  # opens an atomic_write temporary through its guard
    "bilm/embed.py",  # the staging vectors of a resumable embed: appended, fsynced per batch
}


def test_every_file_the_package_writes_goes_through_atomic_write() -> None:
    package = Path(__file__).resolve().parents[2] / "elmo_experiments"
    offenders = []
    for source in sorted(package.rglob("*.py")):
        name = source.relative_to(package).as_posix()
        for number, line in enumerate(source.read_text().splitlines(), start=1):
            if WRITES.search(line) and name not in DIRECT_WRITERS and not re.search(
                    r"\btmp\b|(json\.dump|np\.save)\(.*\b(handle|buffer)\b", line):
                offenders.append(f"{name}:{number}: {line.strip()}")
    assert offenders == []
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


@pytest.mark.parametrize(("error", "full"), [
    (OSError(28, "No space left on device"), True),
    (OSError(2, "No such file or directory"), False),  # not "full" though little is free
    (RuntimeError("file write failed"), True)])  # no errno (torch, HDF5): a full disk likely
def test_a_write_error_says_the_disk_is_full_only_when_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException,
        full: bool) -> None:
    import shutil

    from elmo_experiments.data.files import write_error

    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1, 1, 0))
    message = str(write_error(tmp_path / "out.hdf5", error))
    assert message.startswith(f"{tmp_path / 'out.hdf5'}: cannot write it: ")
    assert ("the disk is full" in message) is full


def test_a_folder_or_a_device_is_named_as_such_not_as_missing(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    with pytest.raises(DataError, match=r"^.*corpus: a folder, not a data file$"):
        resolve_data_path(folder)
    with pytest.raises(DataError, match=r"^/dev/null: not a regular file \(a device, pipe or "
                       r"socket\), not a data file$"):
        resolve_data_path("/dev/null")
