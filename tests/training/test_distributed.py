"""Data-parallel training: the sharding rule (fast, in one process), and two gloo processes
under ``torchrun`` against one process fed the same global batches (slow: several processes,
``make test-all``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from elmo_experiments.data.batching import Batch
from elmo_experiments.errors import DataError
from elmo_experiments.training.distributed import ShardedLoader, World, global_settings, share

ROOT = Path(__file__).resolve().parents[2]


class Groups:
    """A loader of fixed index groups."""

    def __init__(self, groups: list[list[int]]) -> None:
        self._groups = groups

    def groups(self, epoch: int) -> list[list[int]]:
        return self._groups

    def collate(self, group: list[int]) -> Batch:
        return Batch({"x": torch.tensor(group)}, {}, len(group), list(group), [{}] * len(group))

    def instances(self) -> list[dict]:
        return []


GROUPS = [[0, 1, 2, 3, 4], [5, 6], [7], [8, 9, 10]]


@pytest.mark.parametrize("size", [1, 2, 3])
def test_shares_cover_each_global_batch_once(size: int) -> None:
    for group in GROUPS:
        parts = [share(group, World(rank, size)) for rank in range(size)]
        assert sorted(i for part in parts for i in part) == group
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_training_shards_have_equal_counts_and_weights_that_sum_to_the_ranks() -> None:
    loaders = [ShardedLoader(Groups(GROUPS), World(rank, 2), train=True) for rank in (0, 1)]
    batches = [list(loader.batches(0)) for loader in loaders]
    assert [len(b) for b in batches] == [3, 3] == [loader.num_batches(0) for loader in loaders]
    assert [b.indices for b in batches[0]] == [[0, 2, 4], [5], [8, 10]]  # dealt in turn;
    assert [b.indices for b in batches[1]] == [[1, 3], [6], [9]]  # [7] is left out
    for first, second in zip(*batches, strict=True):
        assert first.weight + second.weight == pytest.approx(2.0)
        assert first.weight == pytest.approx(2 * len(first) / (len(first) + len(second)))


def test_training_data_smaller_than_the_ranks_is_an_error_not_zero_steps() -> None:
    with pytest.raises(DataError) as info:
        ShardedLoader(Groups([[0]]), World(0, 2), train=True)
    assert str(info.value) == ("the training data has 1 instance, fewer than the 2 processes: no "
                               "global batch can be shared out (train with fewer processes)")


def test_evaluation_shards_keep_every_instance() -> None:
    loaders = [ShardedLoader(Groups(GROUPS), World(rank, 2), train=False) for rank in (0, 1)]
    seen = sorted(i for loader in loaders for b in loader.batches(0) for i in b.indices)
    assert seen == list(range(11))
    assert [loader.num_batches(0) for loader in loaders] == [4, 3]  # [7] only on rank 0


def test_batch_sizes_are_per_rank() -> None:
    settings = {"batch_size": 4, "max_tokens": 100, "validation_batch_size": None}
    assert global_settings(settings, World(0, 3)) == {"batch_size": 12, "max_tokens": 300,
                                                      "validation_batch_size": None}
    assert global_settings(settings, World()) is settings


# -- two processes (gloo) against one: make test-all ------------------------------------------
MULTI_PROCESS = pytest.mark.slow  # torchrun starts 3 processes a run, 15-30 s a test
EPOCHS = 8
COMMON = ["-o", f"trainer.num_epochs={EPOCHS}", "-o", "trainer.progress_bar=false",
          "-o", "trainer.tensorboard=false", "-o", "model.dropout=0",
          "-o", "model.encoder.input_dropout=0"]  # no random draws: the ranks draw their own


def train(run_dir: Path, processes: int, batch_size: int, config: str, *extra: str,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    args = ["train", config, "-s", str(run_dir), *COMMON,
            "-o", f"data_loader.batch_size={batch_size}", *extra]
    launcher = ([] if processes == 1 else
                ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={processes}"])
    environment = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    environment.update({"OMP_NUM_THREADS": "1", **(env or {})})
    return subprocess.run([sys.executable, *launcher, "-m", "elmo_experiments", *args],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=900)


def epochs(run_dir: Path) -> list[dict]:
    return [json.loads((run_dir / f"metrics_epoch_{n}.json").read_text())
            for n in range(1, EPOCHS + 1)]


def assert_same_training(one: Path, two: Path) -> None:
    for single, double in zip(epochs(one), epochs(two), strict=True):
        for key in ("training_loss", "validation_loss", "validation_f1", "training_f1",
                    "validation_accuracy"):
            assert double[key] == pytest.approx(single[key], rel=1e-4, abs=1e-4), key
    assert single["validation_f1"] > 0, "the comparison needs a model that has learnt"
    metrics = [json.loads((run / "metrics.json").read_text()) for run in (one, two)]
    assert metrics[1]["test_f1"] == pytest.approx(metrics[0]["test_f1"], abs=1e-4)
    assert metrics[1]["best_epoch"] == metrics[0]["best_epoch"]


@pytest.fixture(scope="module")
def ner_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ddp")
    one, two = root / "one", root / "two"
    for run_dir, processes, batch_size in ((one, 1, 8), (two, 2, 4)):
        result = train(run_dir, processes, batch_size, "experiments/ner_baseline.jsonnet")
        assert result.returncode == 0, result.stderr[-3000:]
    return one, two


@MULTI_PROCESS
def test_two_gloo_processes_train_as_one_with_the_same_global_batch(ner_pair) -> None:
    assert_same_training(*ner_pair)


@MULTI_PROCESS
def test_rank_zero_alone_writes_the_run_directory(ner_pair) -> None:
    one, two = ner_pair
    assert sorted(p.name for p in two.iterdir()) == sorted(p.name for p in one.iterdir())
    record = json.loads((two / "run.json").read_text())
    assert record["sessions"][0]["processes"] == 2
    assert "[rank 1]" not in (two / "out.log").read_text()


@MULTI_PROCESS
def test_a_two_process_run_recovers(ner_pair, tmp_path: Path) -> None:
    one, _ = ner_pair
    run_dir = tmp_path / "run"
    first = train(run_dir, 2, 4, "experiments/ner_baseline.jsonnet",
                  "-o", f"trainer.num_epochs={EPOCHS - 1}")
    assert first.returncode == 0, first.stderr[-3000:]
    resumed = train(run_dir, 2, 4, "experiments/ner_baseline.jsonnet", "--recover")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"recovered after epoch {EPOCHS - 1}" in resumed.stderr
    assert_same_training(one, run_dir)


@MULTI_PROCESS
def test_the_elmo_scalar_mix_trains_under_ddp(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """Gradients reach the layer weights and gamma through DistributedDataParallel, and two
    processes agree with one (AllenNLP's scalar mix broke under DataParallel)."""
    runs = []
    for processes, batch_size in ((1, 8), (2, 4)):
        run_dir = tmp_path / f"elmo{processes}"
        result = train(run_dir, processes, batch_size, "experiments/ner.jsonnet",
                       "-o", "model.token_embedders.elmo.dropout=0",
                       env={"ELMO_WEIGHTS": str(tiny_bilm_dir)})
        assert result.returncode == 0, result.stderr[-3000:]
        runs.append(run_dir)
    assert_same_training(*runs)
    mixes = [epochs(run)[-1]["elmo_mixes"]["embedder.embedders.elmo"][0] for run in runs]
    assert mixes[0]["gamma"] != 1.0 and len(set(mixes[0]["weights"])) == 3  # it trained
    assert mixes[1]["gamma"] == pytest.approx(mixes[0]["gamma"], abs=1e-5)
    assert mixes[1]["weights"] == pytest.approx(mixes[0]["weights"], abs=1e-5)


@MULTI_PROCESS
def test_pretraining_runs_on_two_processes(tmp_path: Path) -> None:
    """The biLM's pretraining takes the same trainer: rank 0 exports, the heldout figure is
    the exact softmax's over every heldout sentence."""
    run_dir = tmp_path / "bilm"
    environment = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    environment["OMP_NUM_THREADS"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
         "-m", "elmo_experiments", "pretrain", "experiments/bilm/tiny.jsonnet", "-s",
         str(run_dir), "-o", "trainer.num_epochs=2", "-o", "data_loader.batches_per_epoch=4",
         "-o", "trainer.progress_bar=false", "-o", "data_loader.batch_size=8"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "terminate called" not in result.stderr  # the process group left before exit
    assert result.stderr.count("biLM exported to") == 1  # rank 0 alone reports
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["epochs_completed"] == 2
    assert 1.0 < metrics["best_validation_perplexity"] < 200  # vocabulary of 200
    assert (run_dir / "bilm" / "weights.hdf5").is_file()
    assert json.loads((run_dir / "run.json").read_text())["sessions"][0]["processes"] == 2


@MULTI_PROCESS
def test_a_signal_to_one_rank_stops_both_at_one_step_and_recovery_is_exact(
        ner_pair, tmp_path: Path) -> None:
    """SIGTERM reaches rank 1 alone, mid-epoch: both ranks stop at the same step, rank 0
    writes that point into last.pt, and the resumed run ends as the uninterrupted one."""
    _, two = ner_pair
    run_dir = tmp_path / "run"
    stopped = train(run_dir, 2, 4, "experiments/ner_baseline.jsonnet",
                    env={"ELMO_FAULT_AT": "trainer:epoch:3:batch:4",
                         "ELMO_FAULT_SIGNAL": "SIGTERM", "ELMO_FAULT_RANK": "1"})
    assert stopped.returncode != 0
    assert "stopped by SIGTERM after batch 5 of epoch 3" in stopped.stderr, stopped.stderr[-2000:]
    resumed = train(run_dir, 2, 4, "experiments/ner_baseline.jsonnet", "--recover")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "recovered after batch 5 of epoch 3" in resumed.stderr
    for uninterrupted, recovered in zip(epochs(two), epochs(run_dir), strict=True):
        for key in ("training_loss", "validation_loss", "validation_f1"):
            assert recovered[key] == pytest.approx(uninterrupted[key], rel=1e-6), key


@MULTI_PROCESS
def test_a_killed_rank_stops_the_other_in_one_line_and_recovery_is_exact(
        ner_pair, tmp_path: Path) -> None:
    """SIGKILL to rank 1 mid-epoch: rank 0's next collective fails; it stops with one line
    naming rank 1 and --recover (no gloo traceback), and the resumed run ends as the
    uninterrupted one."""
    _, two = ner_pair
    run_dir = tmp_path / "run"
    killed = train(run_dir, 2, 4, "experiments/ner_baseline.jsonnet",
                   env={"ELMO_FAULT_AT": "trainer:epoch:3:batch:2", "ELMO_FAULT_RANK": "1"})
    assert killed.returncode != 0
    said = [line for line in killed.stderr.splitlines() if line.startswith("error: ")]
    assert said == [f"error: {run_dir}: rank 1 of 2 ended (killed, or stopped on an error of "
                    f"its own: see its output), so rank 0 stopped too; resume with the same "
                    f"command and --recover"], killed.stderr[-3000:]
    assert "[rank0]: Traceback" not in killed.stderr  # the launcher's own report remains
    assert "Connection closed by peer" not in killed.stderr
    resumed = train(run_dir, 2, 4, "experiments/ner_baseline.jsonnet", "--recover")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "recovered after epoch 2" in resumed.stderr
    for uninterrupted, recovered in zip(epochs(two), epochs(run_dir), strict=True):
        for key in ("training_loss", "validation_loss", "validation_f1"):
            assert recovered[key] == pytest.approx(uninterrupted[key], rel=1e-6), key


@MULTI_PROCESS
def test_two_process_runs_end_cleanly_twenty_times_in_a_row(tmp_path: Path,
                                                              tiny_bilm_dir: Path) -> None:
    """Each rank waits at exit for the others before its gloo group is taken down: rank 1 no
    longer aborts at exit ("terminate called without an active exception", about 1 run in 20
    before) while rank 0 still writes the archive."""
    for attempt in range(20):
        run_dir = tmp_path / f"run{attempt}"
        result = train(run_dir, 2, 4, "experiments/ner.jsonnet", "-o", "trainer.num_epochs=1",
                       "-o", "model.token_embedders.elmo.dropout=0",
                       env={"ELMO_WEIGHTS": str(tiny_bilm_dir)})
        assert result.returncode == 0, f"run {attempt + 1}: {result.stderr[-3000:]}"
        assert "terminate called" not in result.stderr, f"run {attempt + 1}"
        assert (run_dir / "model.tar.gz").is_file()
