"""HDF5 files written into a full disk: one ``WriteError`` naming the file, the earlier file
intact, no temporary left, and HDF5 never sees the failure (no "Exception ignored" noise)."""

from __future__ import annotations

import errno
import io
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from elmo_experiments.bilm.weights import load_bilm, save_weights
from elmo_experiments.data import hdf5_output
from elmo_experiments.data.files import atomic_write
from elmo_experiments.data.hdf5_output import HDF5Output
from elmo_experiments.errors import WriteError


class SmallDisk(io.FileIO):
    """A raw file on a disk with ``room`` bytes free: past them, writes fail with ENOSPC."""

    room = 4096

    def write(self, data: Any) -> int:
        size = len(memoryview(data).cast("B"))
        end = self.tell() + size
        if end > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


@pytest.fixture
def small_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hdf5_output, "open", lambda path, mode, buffering: SmallDisk(path, "r+"),
                        raising=False)


def test_writes_after_a_failed_one_are_dropped_and_the_failure_raised(
        tmp_path: Path, small_disk: None, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.hdf5"
    path.touch()
    out = HDF5Output(path)
    out.file.create_dataset("small", data=np.zeros(8))
    out.check()
    out.file.create_dataset("big", data=np.zeros(10_000))
    out.file.create_dataset("more", data=np.zeros(10_000))
    with pytest.raises(OSError, match="No space left"):
        out.close()
    assert "Exception ignored" not in capfd.readouterr().err


def test_saving_weights_into_a_full_disk_keeps_the_old_ones(
        tiny_bilm_dir: Path, tmp_path: Path, small_disk: None, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    bilm = load_bilm(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
    folder = tmp_path / "bilm"
    folder.mkdir()
    (folder / "weights.hdf5").write_bytes(b"the old weights")
    monkeypatch.setattr(SmallDisk, "room", 20_000)  # the tiny biLM needs about 42 kB
    with pytest.raises(WriteError, match=r"^\S+weights\.hdf5: cannot write it: the disk is full"
                       r" \(No space left on device\); an earlier version of it, if any, is "
                       r"intact$"):
        save_weights(bilm, folder)
    assert (folder / "weights.hdf5").read_bytes() == b"the old weights"
    assert sorted(p.name for p in folder.iterdir()) == ["options.json", "weights.hdf5"]
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_whole_write_reads_back(tmp_path: Path) -> None:
    def write(tmp: str) -> None:
        with HDF5Output(tmp) as out:
            out.file.create_dataset("a/b", data=np.arange(100_000, dtype=np.float32))

    atomic_write(tmp_path / "x.hdf5", write)
    with h5py.File(tmp_path / "x.hdf5", "r") as handle:
        assert np.array_equal(handle["a/b"][...], np.arange(100_000, dtype=np.float32))
