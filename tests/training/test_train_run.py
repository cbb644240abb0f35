"""Training end to end on the embedded sample: run directory contract, recovery, determinism."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from elmo_experiments.contracts import Callback
from elmo_experiments.errors import RunDirError
from elmo_experiments.run import train

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "experiments" / "ner_baseline.jsonnet"
FAST = ["trainer.num_epochs=4", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=4"]


class StopAt(Callback):
    """Raises KeyboardInterrupt at a given epoch (in its ``on_epoch``, before its
    checkpoint: the epoch is trained again) or batch."""

    def __init__(self, epoch: int, batch: int | None = None) -> None:
        self.epoch, self.batch = epoch, batch

    def on_batch(self, epoch, batch, logs):
        if self.batch is not None and epoch == self.epoch and batch == self.batch:
            raise KeyboardInterrupt

    def on_epoch(self, epoch, metrics):
        if self.batch is None and epoch == self.epoch:
            raise KeyboardInterrupt


def _comparable(metrics: dict) -> dict:
    drop = {"training_duration_s", "epoch_durations_s", "data"}
    return {k: v for k, v in metrics.items() if k not in drop and "tokens_per_s" not in k}


def _epochs(run_dir: Path) -> list[dict]:
    """Every per-epoch record without its wall-clock duration."""
    records = []
    for path in sorted(run_dir.glob("metrics_epoch_*.json")):
        record = json.loads(path.read_text())
        record.pop("duration_s")
        record.pop("training_tokens_per_s")
        records.append(record)
    return records


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch):
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory, samples_only):
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    return run_dir, train(CONFIG, run_dir, overrides=FAST)


def test_run_directory_contract(reference_run):
    run_dir, metrics = reference_run
    for name in ["config.json", "best.pt", "last.pt", "metrics.json", "out.log", "log.jsonl",
                 "vocabulary/tokens.txt", "vocabulary/labels.txt"]:
        assert (run_dir / name).is_file(), name
    for epoch in range(1, 5):
        record = json.loads((run_dir / f"metrics_epoch_{epoch}.json").read_text())
        assert record["epoch"] == epoch and "validation_f1" in record
    saved = json.loads((run_dir / "metrics.json").read_text())
    assert saved["epochs_completed"] == 4
    assert 1 <= saved["best_epoch"] <= 4
    best = json.loads((run_dir / f"metrics_epoch_{saved['best_epoch']}.json").read_text())
    assert saved["best_validation_f1"] == best["validation_f1"]
    assert max(json.loads((run_dir / f"metrics_epoch_{e}.json").read_text())["validation_f1"]
               for e in range(1, 5)) == saved["best_validation_f1"]
    assert "test_f1" in saved and "test_f1-PER" in saved
    assert saved["data"]["embedded_sample"] is True
    assert saved["data"]["splits"]["train"]["sha1"]
    assert metrics["best_epoch"] == saved["best_epoch"]


def test_refuses_non_empty_directory(reference_run):
    run_dir, _ = reference_run
    with pytest.raises(RunDirError, match=r"--recover.*--force"):
        train(CONFIG, run_dir, overrides=FAST)


def test_same_seed_same_metrics(reference_run, tmp_path):
    _, metrics = reference_run
    again = train(CONFIG, tmp_path / "again", overrides=FAST)
    assert _comparable(again) == _comparable(metrics)
    assert _epochs(tmp_path / "again") == _epochs(reference_run[0])


def test_other_seed_differs(reference_run, tmp_path):
    _, metrics = reference_run
    other = train(CONFIG, tmp_path / "other", overrides=[*FAST, "random_seed=7"])
    assert other["training_loss"] != metrics["training_loss"]


@pytest.mark.parametrize("stop", [StopAt(epoch=2), StopAt(epoch=3, batch=1)],
                         ids=["after-epoch", "mid-epoch"])
def test_interrupt_then_recover_matches(reference_run, tmp_path, stop):
    reference_dir, metrics = reference_run
    run_dir = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        train(CONFIG, run_dir, overrides=FAST, callbacks=[stop])
    assert not (run_dir / "metrics.json").exists()
    recovered = train(CONFIG, run_dir, overrides=FAST, recover=True)
    assert _comparable(recovered) == _comparable(metrics)
    assert _epochs(run_dir) == _epochs(reference_dir)


def test_recover_refuses_a_different_config(reference_run, tmp_path):
    run_dir, _ = reference_run
    with pytest.raises(RunDirError, match=r"model\.dropout"):
        train(CONFIG, run_dir, overrides=[*FAST, "model.dropout=0.3"], recover=True)


def test_recover_may_extend_the_schedule(reference_run, tmp_path):
    """Four epochs, then recovered with six: the same as six epochs straight."""
    import shutil

    run_dir = tmp_path / "extended"
    shutil.copytree(reference_run[0], run_dir)
    six = [o for o in FAST if not o.startswith("trainer.num_epochs")] + ["trainer.num_epochs=6"]
    extended = train(CONFIG, run_dir, overrides=six, recover=True)
    straight = train(CONFIG, tmp_path / "straight", overrides=six)
    assert extended["epochs_completed"] == 6
    assert _comparable(extended) == _comparable(straight)
    assert json.loads((run_dir / "config.json").read_text())["trainer"]["num_epochs"] == 6


def test_force_wipes(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("config.json", "metrics_epoch_7.json", ".last.pt.ab12cd34", "run.lock"):
        (run_dir / name).write_text("{}")  # an earlier run's, and a dead writer's lock
    (run_dir / "tensorboard").mkdir()
    (run_dir / "tensorboard" / "events").write_text("old")
    train(CONFIG, run_dir, overrides=["trainer.num_epochs=1", "trainer.progress_bar=false",
                                      "trainer.tensorboard=false"], force=True)
    assert sorted(p.name for p in run_dir.iterdir() if not p.name.startswith(".")) == [
        "best.pt", "config.json", "last.pt", "log.jsonl", "metrics.json",
        "metrics_epoch_1.json", "model.tar.gz", "out.log", "run.json", "vocabulary"]


def test_force_refuses_what_no_run_writes(tmp_path):
    """--force deletes only what a run writes: a user's files stop it, by name, whole."""
    run_dir = tmp_path / "run"
    (run_dir / "sub").mkdir(parents=True)
    (run_dir / "config.json").write_text("{}")
    (run_dir / "notes.txt").write_text("mine")
    (run_dir / "sub" / "data.csv").write_text("1,2")
    with pytest.raises(RunDirError) as error:
        train(CONFIG, run_dir, overrides=FAST, force=True)
    assert str(error.value) == (
        f"{run_dir}: holds 'notes.txt', which no run writes; --force deletes only a run's own "
        f"files, so move it away or choose another run directory (2 such entries, nothing "
        f"deleted)")
    assert (run_dir / "notes.txt").read_text() == "mine"
    assert (run_dir / "sub" / "data.csv").read_text() == "1,2"
    assert (run_dir / "config.json").read_text() == "{}"


def test_force_keeps_the_old_run_when_the_new_model_cannot_be_built(tmp_path):
    from elmo_experiments.errors import ConfigError

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "precious.txt").write_text("an earlier run")
    with pytest.raises(ConfigError, match=r"model\.dropout: 1\.5 is outside \[0\.0, 1\.0\]"):
        train(CONFIG, run_dir, overrides=[*FAST, "model.dropout=1.5"], force=True)
    assert (run_dir / "precious.txt").read_text() == "an earlier run"


def test_run_json_names_each_word_vector_file_and_its_digest(tmp_path):
    from elmo_experiments.training.run_identity import vector_digests

    vectors = tmp_path / "v.txt"
    vectors.write_text("the 0.1 0.2\n")
    config = {"model": {"token_embedders": {
        "tokens": {"type": "embedding", "embedding_dim": 2, "pretrained_file": str(vectors)},
        "chars": {"type": "embedding", "embedding_dim": 2}}}}
    assert vector_digests(config) == [
        {"file": str(vectors.resolve()), "sha1": hashlib.sha1(vectors.read_bytes()).hexdigest()}]


def test_run_json_says_what_produced_the_run(reference_run, tmp_path):
    import hashlib
    import re

    run_dir, _ = reference_run
    record = json.loads((run_dir / "run.json").read_text())
    assert record["config"] == {"path": str(CONFIG.resolve()),
                                "sha256": hashlib.sha256(CONFIG.read_bytes()).hexdigest()}
    assert record["overrides"] == FAST and record["ext_vars"] == {}
    # the sample fallback and random word vectors were used
    assert record["environment_read"] == {"ELMO_DATA_DIR": "", "ELMO_VECTORS_DIR": ""}
    assert record["bilm"] == [] and record["vectors"] == []  # no biLM, no word vectors
    [session] = record["sessions"]
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|elmo-experiments \S+", session["code"])
    assert set(session["versions"]) == {"elmo_experiments", "torch", "python"}
    assert session["ended"] == record["ended"] is not None and session["host"]
    # each resumption is one more session
    import shutil

    copy = tmp_path / "again"
    shutil.copytree(run_dir, copy)
    six = [o for o in FAST if not o.startswith("trainer.num_epochs")] + ["trainer.num_epochs=5"]
    train(CONFIG, copy, overrides=six, recover=True)
    again = json.loads((copy / "run.json").read_text())
    assert len(again["sessions"]) == 2 and again["sessions"][1]["overrides"] == six


def test_checkpoints_describe_themselves(reference_run):
    from elmo_experiments.data.files import sha1_of
    from elmo_experiments.training.run_dir import load_checkpoint

    run_dir, metrics = reference_run
    config = json.loads((run_dir / "config.json").read_text())
    vocabulary = sha1_of(*sorted(p for p in (run_dir / "vocabulary").iterdir() if p.is_file()))
    best, last = load_checkpoint(run_dir / "best.pt"), load_checkpoint(run_dir / "last.pt")
    for checkpoint in (best, last):
        assert checkpoint["config"] == config
        assert checkpoint["vocabulary_sha1"] == vocabulary
    assert best["epoch"] == metrics["best_epoch"] and best["metric"] == "+f1"
    assert best["+f1"] == metrics["best_validation_f1"]


def _longer(epochs: int) -> list[str]:
    return [o for o in FAST if not o.startswith("trainer.num_epochs")] + [
        f"trainer.num_epochs={epochs}"]


def test_a_run_resumes_and_loads_from_a_checkout_elsewhere(reference_run, tmp_path,
                                                            monkeypatch):
    """config.json names the embedded samples from the project's root, so the run resumes,
    and its archive loads, where the project is checked out elsewhere."""
    import shutil

    from elmo_experiments.config import loader, paths
    from elmo_experiments.run import load_run

    run_dir = tmp_path / "run"
    shutil.copytree(reference_run[0], run_dir)
    saved = (run_dir / "config.json").read_text()
    assert str(ROOT) not in saved and '"{project}/reproduction/ner/sample/train.txt"' in saved
    checkout = tmp_path / "checkout"  # the project moved: the old checkout is not read
    shutil.copytree(ROOT / "experiments", checkout / "experiments")
    shutil.copytree(ROOT / "reproduction" / "ner" / "sample",
                    checkout / "reproduction" / "ner" / "sample")
    monkeypatch.setattr(loader, "PROJECT_ROOT", checkout)
    monkeypatch.setattr(loader, "LIBRARY_DIR", checkout / "experiments" / "lib")
    monkeypatch.setattr(paths, "PROJECT_ROOT", checkout)
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))  # the archive's extraction
    metrics = train(checkout / "experiments" / "ner_baseline.jsonnet", run_dir,
                    overrides=_longer(5), recover=True)
    assert metrics["epochs_completed"] == 5
    assert metrics["data"]["splits"]["train"]["path"] == str(
        checkout / "reproduction" / "ner" / "sample" / "train.txt")
    assembled = load_run(run_dir / "model.tar.gz")
    assert assembled.experiment["train_data_path"] == str(
        checkout / "reproduction" / "ner" / "sample" / "train.txt")


def test_resuming_with_fewer_processes_says_the_global_batch_halves(reference_run, tmp_path,
                                                                    caplog):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(reference_run[0], run_dir)
    record = json.loads((run_dir / "run.json").read_text())
    record["sessions"][-1]["processes"] = 2  # as torchrun --nproc-per-node=2 records it
    (run_dir / "run.json").write_text(json.dumps(record))
    with caplog.at_level("WARNING", logger="elmo_experiments"):
        train(CONFIG, run_dir, overrides=_longer(5), recover=True)
    lines = [r.getMessage() for r in caplog.records if "global batch" in r.getMessage()]
    assert lines == [f"{run_dir}: trained by 2 processes, resumed by 1: data_loader batch "
                     f"sizes are per process, so the global batch halves (resume with "
                     f"torchrun --nproc-per-node=2 to keep it)"]
    assert json.loads((run_dir / "run.json").read_text())["sessions"][-1]["processes"] == 1
