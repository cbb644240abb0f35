"""``elmo-exp embed`` into a full disk ends in one line and keeps what ``--recover`` needs (and
nothing when no batch was done); its output gets the user's umask."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _embed(text: Path, output: Path, weights: Path, file_size_limit: int | None = None,
           extra: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """``elmo-exp embed`` in a subprocess, its files limited to ``file_size_limit`` bytes (past
    it a write fails as on a full disk), with the umask 022."""
    import resource
    import signal

    def limit() -> None:
        os.umask(0o022)
        if file_size_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    command = [sys.executable, "-m", "elmo_experiments", "embed", str(text), str(output),
               "--weights", str(weights), *(extra or [])]
    return subprocess.run(command, cwd=ROOT, preexec_fn=limit, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(sys.platform == "win32", reason="needs RLIMIT_FSIZE")
def test_embed_into_a_full_disk_ends_in_one_line_and_keeps_its_work_for_recover(
        tiny_bilm_dir: Path, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("the cat sat on the mat and looked at the dog\n" * 1000)
    output = tmp_path / "out" / "layers.hdf5"
    output.parent.mkdir()
    result = _embed(text, output, tiny_bilm_dir, file_size_limit=100_000)
    assert result.returncode == 1, result.stderr[-3000:]
    staging = output.parent / ".layers.hdf5.partial"
    assert result.stderr.strip().splitlines() == [
        f"error: {output}: cannot write it: File too large; an earlier version of it, if any, "
        f"is intact; the batches done so far are kept in {staging}: --recover finishes the "
        "run"], result.stderr[-3000:]
    assert list(output.parent.iterdir()) == [staging]  # no output, no temporary file
    recovered = _embed(text, output, tiny_bilm_dir, extra=["--recover"])
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    whole = _embed(text, tmp_path / "whole.hdf5", tiny_bilm_dir)
    assert whole.returncode == 0, whole.stderr[-3000:]
    with h5py.File(output, "r") as got, h5py.File(tmp_path / "whole.hdf5", "r") as expected:
        assert sorted(got) == sorted(expected)
        for key in ("0", "640", "999"):
            assert (got[key][...] == expected[key][...]).all()
    assert list(output.parent.iterdir()) == [output]


def test_a_full_disk_before_the_first_batch_leaves_nothing_behind(
        tiny_bilm_dir: Path, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("the cat sat on the mat and looked at the dog\n" * 1000)
    output = tmp_path / "out" / "layers.hdf5"
    output.parent.mkdir()
    result = _embed(text, output, tiny_bilm_dir, file_size_limit=10_000)  # the first batch's
    assert result.returncode == 1, result.stderr[-3000:]  # vectors take 67,584 bytes
    assert result.stderr.strip().splitlines() == [
        f"error: {output}: cannot write it: File too large; an earlier version of it, if any, "
        "is intact"], result.stderr[-3000:]
    assert list(output.parent.iterdir()) == []


def test_embed_output_has_the_umask_permissions(tiny_bilm_dir: Path, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("the cat sat\n\non the mat\n")
    output = tmp_path / "layers.hdf5"
    result = _embed(text, output, tiny_bilm_dir)
    assert result.returncode == 0, result.stderr[-3000:]
    assert output.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
    with h5py.File(output, "r") as handle:
        assert handle["0"].shape == (3, 3, 8) and handle["1"].shape == (3, 0, 8)


def test_a_progress_record_torch_cannot_write_is_a_one_line_write_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from elmo_experiments.bilm.embed import Progress, Staging
    from elmo_experiments.errors import WriteError

    def fail(*args: object, **kwargs: object) -> None:  # torch's own report of a full disk
        raise RuntimeError("basic_ios::clear: iostream error")

    staging = Staging(tmp_path / "out.hdf5")
    staging.folder.mkdir()
    monkeypatch.setattr(torch, "save", fail)
    with pytest.raises(WriteError, match=r"progress\.pt: cannot write it: basic_ios::clear"):
        staging.commit(Progress())
