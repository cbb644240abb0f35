"""The default thread count: affinity, capped by the cgroup quota along the process's path."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from elmo_experiments import threads


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_v2_quota_is_read_from_the_process_group_and_the_tightest_ancestor(tmp_path: Path
                                                                             ) -> None:
    _write(tmp_path / "jobs" / "cpu.max", "150000 100000\n")  # 1.5 CPUs for all jobs
    _write(tmp_path / "jobs" / "mine" / "cpu.max", "max 100000\n")  # none of its own
    assert threads.quota_cpus(tmp_path, "0::/jobs/mine\n") == pytest.approx(1.5)
    _write(tmp_path / "jobs" / "mine" / "cpu.max", "50000 100000\n")
    assert threads.quota_cpus(tmp_path, "0::/jobs/mine\n") == pytest.approx(0.5)


def test_a_v1_quota_and_none_at_all(tmp_path: Path) -> None:
    _write(tmp_path / "cpu,cpuacct" / "box" / "cpu.cfs_quota_us", "300000\n")
    _write(tmp_path / "cpu,cpuacct" / "box" / "cpu.cfs_period_us", "100000\n")
    assert threads.quota_cpus(tmp_path, "4:cpu,cpuacct:/box\n1:memory:/x\n") == 3.0
    _write(tmp_path / "cpu,cpuacct" / "box" / "cpu.cfs_quota_us", "-1\n")  # unlimited
    assert threads.quota_cpus(tmp_path, "4:cpu,cpuacct:/box\n") is None
    assert threads.quota_cpus(tmp_path, "0::/\n") is None


def test_available_cpus_is_the_affinity_capped_by_the_quota_rounded_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "affinity_cpus", lambda: 8)
    monkeypatch.setattr(threads, "quota_cpus", lambda root: 1.5)
    assert threads.available_cpus() == 2
    monkeypatch.setattr(threads, "quota_cpus", lambda root: 0.2)
    assert threads.available_cpus() == 1
    monkeypatch.setattr(threads, "quota_cpus", lambda root: None)
    assert threads.available_cpus() == 8


def test_set_threads_takes_the_argument_then_omp_num_threads_then_the_cpus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        assert threads.set_threads(2) == 2 and torch.get_num_threads() == 2
        assert threads.set_threads() == 1 and torch.get_num_threads() == 1
        monkeypatch.delenv("OMP_NUM_THREADS")
        monkeypatch.setattr(threads, "available_cpus", lambda: 3)
        assert threads.set_threads() == 3
        with pytest.raises(ValueError, match="at least 1"):
            threads.set_threads(0)
    finally:
        torch.set_num_threads(before)


def _leaves(group, prefix=()):  # type: ignore[no-untyped-def]
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _leaves(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def test_every_command_takes_threads_and_sets_torchs() -> None:
    from click.testing import CliRunner

    from elmo_experiments.cli import cli

    for path, command in _leaves(cli):
        assert "threads" in [p.name for p in command.params], " ".join(path)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        result = CliRunner().invoke(cli, ["data", "list", "--threads", "1"])
        assert result.exit_code == 0, result.output
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
