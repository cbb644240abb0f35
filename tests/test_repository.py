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
