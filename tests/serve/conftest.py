"""Tiny trained archives for the serving, spaCy and browser tests: each task trained for one
epoch on its embedded sample with the tiny biLM (seconds each), once per session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAST = ["trainer.num_epochs=1", "trainer.progress_bar=false", "data_loader.batch_size=8"]


@pytest.fixture(scope="session")
def archive_of(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory
               ) -> Callable[[str], Path]:
    """``archive_of(task)``: the task's model.tar.gz (trained on first use)."""
    from elmo_experiments.run import train

    made: dict[str, Path] = {}
    root = tmp_path_factory.mktemp("served")

    def archive(task: str) -> Path:
        if task not in made:
            with pytest.MonkeyPatch.context() as patch:
                patch.delenv("ELMO_DATA_DIR", raising=False)
                patch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
                patch.setenv("ELMO_CACHE_DIR", str(root / "cache"))
                train(REPO / "experiments" / f"{task}.jsonnet", root / task, overrides=FAST)
            made[task] = root / task / "model.tar.gz"
        return made[task]

    return archive
