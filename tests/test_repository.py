"""Repository rules that a review could miss: large files live only beside a model card."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LARGE = 1_000_000  # bytes


def test_large_files_only_in_model_card_folders() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    offenders = [name for name in listed if name and (ROOT / name).is_file()
                 and (ROOT / name).stat().st_size > LARGE
                 and not ((ROOT / name).parent / "MODEL_CARD.md").is_file()]
    assert offenders == [], f"files over {LARGE:,} bytes outside a model-card folder"


def test_the_wheel_carries_shipped_biLMs(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """A non-editable install holds ``elmo_experiments/bilm/models/<name>/*``: build a wheel
    from a copy of the tracked files plus one model folder, and look inside."""
    import sys
    import zipfile

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    source = tmp_path / "source"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    model = source / "elmo_experiments" / "bilm" / "models" / "probe"
    shutil.copytree(tiny_bilm_dir, model, dirs_exist_ok=True)
    (model / "MODEL_CARD.md").write_text("# probe\n")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                             "--no-build-isolation", "-w", str(tmp_path / "wheel"), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    [wheel] = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for file in model.iterdir():
        assert f"elmo_experiments/bilm/models/probe/{file.name}" in names
