"""Each broken config makes ``elmo-exp validate`` fail with one line per problem, no traceback.

A fixture's header says what to expect: ``// expect: <substring>`` (first line; more lines may
follow) and optionally ``// problems: N`` (default 1). The corpus runs the command line's
``main`` in this process (fast); a few tests start a fresh interpreter, as a user does.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

BROKEN_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "broken_configs"
CONFIGS = sorted(BROKEN_DIR.glob("*.jsonnet"))
UNSET_VARIABLES = ("ELMO_DATA_DIR", "ELMO_BROKEN_CONFIG_UNSET_VAR")


@dataclass
class Header:
    expected: list[str]
    problems: int


def read_header(path: Path) -> Header:
    expected: list[str] = []
    problems = 1
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("// expect:"):
            expected.append(line.removeprefix("// expect:").strip())
        elif line.startswith("// problems:"):
            problems = int(line.removeprefix("// problems:"))
        else:
            break
    return Header(expected, problems)


def run_validate(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "elmo_experiments", "validate", str(path), *options],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def validate_here(path: Path) -> subprocess.CompletedProcess[str]:
    """``elmo-exp validate PATH`` through the command line's ``main``, in this process."""
    from elmo_experiments.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name in UNSET_VARIABLES:
            patch.delenv(name, raising=False)
        patch.setattr(sys, "argv", ["elmo-exp", "validate", str(path)])
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
    return subprocess.CompletedProcess(["elmo-exp", "validate", str(path)], code,
                                       out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def results() -> dict[Path, subprocess.CompletedProcess[str]]:
    return {path: validate_here(path) for path in CONFIGS}


def test_a_fresh_interpreter_reports_the_same() -> None:
    path = BROKEN_DIR / "19_several_problems.jsonnet"
    fresh = run_validate(path)
    here = validate_here(path)
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (here.returncode, here.stdout,
                                                              here.stderr)


def test_corpus_is_complete() -> None:
    assert len(CONFIGS) >= 12
    numbers = [path.name.split("_")[0] for path in CONFIGS]
    assert len(set(numbers)) == len(numbers)
    for path in CONFIGS:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("// expect: "), path.name
        assert all(read_header(path).expected), path.name


@pytest.mark.parametrize("path", CONFIGS, ids=[path.stem for path in CONFIGS])
def test_broken_config_fails_cleanly(
    path: Path, results: dict[Path, subprocess.CompletedProcess[str]]
) -> None:
    header = read_header(path)
    result = results[path]
    stderr = result.stderr
    assert result.returncode == 1, (result.stdout, stderr)
    assert result.stdout == ""
    assert "Traceback" not in stderr
    assert stderr.startswith(f"error: {path}: "), stderr
    for expected in header.expected:
        assert expected in stderr, (expected, stderr)
    lines = stderr.rstrip("\n").split("\n")
    if header.problems == 1:
        assert len(lines) == 1, stderr
    else:
        assert lines[0] == f"error: {path}: {header.problems} problems"
        assert len(lines) == 1 + header.problems
        assert all(line.startswith("  ") and line.strip() for line in lines[1:])
        for expected in header.expected:
            assert any(expected in line for line in lines[1:]), (expected, stderr)


def test_ext_var_on_the_command_line_fixes_the_config() -> None:
    path = BROKEN_DIR / "11_undefined_ext_var.jsonnet"
    result = run_validate(path, "--ext-var", "ELMO_BROKEN_CONFIG_UNSET_VAR=2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: ok")


def test_override_on_the_command_line_fixes_the_config() -> None:
    path = BROKEN_DIR / "04_num_epochs_wrong_type.jsonnet"
    result = run_validate(path, "-o", "trainer.num_epochs=2", "-o", '{"random_seed": 1}')
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: ok")


def test_malformed_ext_var_is_one_line() -> None:
    path = BROKEN_DIR / "11_undefined_ext_var.jsonnet"
    result = run_validate(path, "--ext-var", "novalue")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr == "error: command line: --ext-var 'novalue': expected name=value\n"
