"""Fixtures shared by the whole suite: tiny random biLMs in the released layout, and the
embedded samples for a whole module.

The suite's torch threads sleep while they wait for work (``OMP_WAIT_POLICY=PASSIVE``, set
before torch is imported, inherited by the commands the tests start): on a busy machine
spinning threads only take CPU from the processes they wait for. bf16 runs as asked on any CPU
(``ELMO_FORCE_BF16=1``): the tests of bf16 numerics need it, and ``tests/test_precision.py``
unsets it where it checks the fall-back to fp32 on CPUs without bf16 matrix units.

Under ``pytest -n N`` (``make test``: a worker per core) each worker and the commands it starts
compute on one thread, so that N workers share N cores rather than fight over them.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ELMO_FORCE_BF16", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixture_models import TINY

from elmo_experiments import components
from elmo_experiments.bilm.weights import write_random_weights

components.load()  # the suite is an entry point, as the CLI and elmo_experiments.api are


@pytest.fixture(scope="session")
def tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny biLM in the released layout (seed 0)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm"), TINY, seed=0)


@pytest.fixture(scope="module")
def samples_only() -> Iterator[None]:
    """``ELMO_DATA_DIR`` unset for a module's runs: configs read the embedded samples."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        yield


@pytest.fixture(scope="session")
def other_tiny_bilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same architecture with other random weights (seed 1)."""
    return write_random_weights(tmp_path_factory.mktemp("tiny_bilm_other"), TINY, seed=1)


@pytest.fixture(scope="session")
def learned_ner_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NER without ELMo trained through the command line for 12 epochs on the embedded
    sample, long enough to learn it (dev F1 > 0); once per test process, read-only."""
    import json
    import subprocess
    import sys

    path = tmp_path_factory.mktemp("cli") / "run"
    env = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    result = subprocess.run(
        [sys.executable, "-m", "elmo_experiments", "train", "experiments/ner_baseline.jsonnet",
         "-s", str(path), *LEARNED_NER], cwd=Path(__file__).resolve().parents[1], env=env,
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["best_validation_f1"] > 0, "the sample is learnable"
    assert "EMBEDDED SAMPLE" in result.stderr
    return path


LEARNED_NER = ["-o", "trainer.num_epochs=12", "-o", "data_loader.batch_size=4",
               "-o", "trainer.progress_bar=false"]
ONE_EPOCH = ["trainer.num_epochs=1", "trainer.progress_bar=false", "data_loader.batch_size=8"]


@pytest.fixture(scope="session")
def trained_run(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> Callable[[str], Path]:
    """``trained_run(name)``: the run directory of ``experiments/NAME.jsonnet`` trained for one
    epoch on its embedded sample, CPU-sized (``ELMO_SIZE=cpu``), with the tiny biLM; trained
    on first use, once per test process, and shared by every test that only reads a run
    (serving, spaCy, predict, evaluate, the official files). Don't change what it returns."""
    from elmo_experiments.run import train

    made: dict[str, Path] = {}
    root = tmp_path_factory.mktemp("trained")

    def run(name: str) -> Path:
        if name not in made:
            with pytest.MonkeyPatch.context() as patch:
                patch.delenv("ELMO_DATA_DIR", raising=False)
                patch.setenv("ELMO_SIZE", "cpu")
                patch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
                patch.setenv("ELMO_CACHE_DIR", str(root / "cache"))
                train(Path(__file__).resolve().parents[1] / "experiments" / f"{name}.jsonnet",
                      root / name, overrides=ONE_EPOCH)
            made[name] = root / name
        return made[name]

    return run


@pytest.fixture(scope="session")
def archive_of(trained_run: Callable[[str], Path]) -> Callable[[str], Path]:
    """``archive_of(task)``: the ``model.tar.gz`` of ``trained_run(task)`` (ELMo at the input,
    the tiny biLM)."""
    return lambda task: trained_run(task) / "model.tar.gz"
