"""model.tar.gz: written at the end of training, self-contained, usable from any directory;
config paths made absolute (the project's own portable); devices; the Python API over it."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
import torch

from elmo_experiments.errors import ConfigError, DataError
from elmo_experiments.predict import evaluate_file, predict_lines
from elmo_experiments.run import train

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "reproduction" / "ner" / "sample"
FAST = ["trainer.num_epochs=1", "trainer.progress_bar=false", "data_loader.batch_size=8"]


@pytest.fixture(scope="module")
def trained(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """NER with ELMo from a biLM named by a relative path, trained in a scratch directory;
    then the biLM copy and the run directory are moved away, leaving only the archive."""
    work = tmp_path_factory.mktemp("archive_work")
    shutil.copytree(tiny_bilm_dir, work / "my_bilm")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(work)
        patch.delenv("ELMO_DATA_DIR", raising=False)
        patch.setenv("ELMO_WEIGHTS", "my_bilm")  # relative to where training runs
        train(REPO / "experiments" / "ner.jsonnet", "run", overrides=FAST)
    config = json.loads((work / "run" / "config.json").read_text())
    before = list(predict_lines(work / "run", str(SAMPLE / "dev.txt")))
    kept = tmp_path_factory.mktemp("archive_kept")
    shutil.copy(work / "run" / "model.tar.gz", kept / "model.tar.gz")
    shutil.rmtree(work)  # the biLM and the run are gone: only the archive is left
    return {"archive": kept / "model.tar.gz", "config": config, "before": before}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELMO_CACHE_DIR", str(tmp_path / "cache"))


def test_config_paths_are_absolute_or_the_projects_own(trained) -> None:
    """A path outside the project is absolute; the project's own files (the embedded
    samples) are named from the project's root, wherever the checkout lies."""
    elmo = trained["config"]["model"]["token_embedders"]["elmo"]
    assert Path(elmo["weights"]).is_absolute() and elmo["weights"].endswith("my_bilm")
    assert trained["config"]["train_data_path"] == "{project}/reproduction/ner/sample/train.txt"


def test_the_archive_holds_the_biLM_and_predicts_elsewhere(trained, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    with tarfile.open(trained["archive"]) as tar:
        names = set(tar.getnames())
    assert {"archive.json", "config.json", "best.pt", "metrics.json",
            "bilm/0/options.json", "bilm/0/weights.hdf5"} <= names
    monkeypatch.chdir(tmp_path)
    after = list(predict_lines(trained["archive"], str(SAMPLE / "dev.txt")))
    assert after == trained["before"]
    metrics = evaluate_file(trained["archive"], SAMPLE / "dev.txt")
    assert 0.0 <= metrics["conlleval_f1"] <= 100.0


def test_predict_on_an_archive_from_the_command_line(trained, tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "elmo_experiments", "predict",
                           str(trained["archive"]), str(SAMPLE / "dev.txt"), "--device", "auto"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"ELMO_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin"})
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["tags"] for r in records] == [r["tags"] for r in trained["before"]]
    assert all(set(r["tags"]) <= {"O", "I-PER", "I-LOC", "I-ORG", "I-MISC", "B-PER", "B-LOC",
                                  "B-ORG", "B-MISC"} for r in records)  # the data's IOB1


def test_a_named_biLM_must_keep_its_digest(trained, tmp_path: Path, tiny_bilm_dir: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments.bilm import pretrained
    from elmo_experiments.bilm.weights import weights_digest
    from elmo_experiments.training.archive import loading_config

    shutil.copytree(tiny_bilm_dir, tmp_path / "models" / "demo")  # a shipped biLM 'demo'
    (tmp_path / "models" / "demo" / "MODEL_CARD.md").write_text("# demo\n")
    monkeypatch.setattr(pretrained, "SHIPPED_ROOT", tmp_path / "models")
    monkeypatch.setattr(pretrained, "SHIPPED_SHA256", {  # as the package pins its biLMs
        "demo": pretrained.folder_digests(tmp_path / "models" / "demo")})
    config = json.loads(json.dumps(trained["config"]))
    config["model"]["token_embedders"]["elmo"]["weights"] = "demo"
    folder = tmp_path / "unpacked"
    folder.mkdir()
    digest = weights_digest(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
    for sha1, fits in ((digest, True), ("0" * 40, False)):
        (folder / "archive.json").write_text(json.dumps(
            {"format": 1, "bilm": [{"name": "demo", "sha1": sha1}]}))
        if fits:
            elmo = loading_config(config, folder)["model"]["token_embedders"]["elmo"]
            assert elmo["weights"] == "demo"
        else:
            with pytest.raises(DataError, match="trained with biLM 'demo' of SHA-1 0000"):
                loading_config(config, folder)


def test_an_archive_with_an_escaping_member_is_refused(tmp_path: Path) -> None:
    from elmo_experiments.training.archive import extract_archive

    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bad, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(DataError, match="not a plain file inside the archive"):
        extract_archive(bad)
    assert not (tmp_path / "escape.txt").exists()


@pytest.mark.parametrize("where", [0.3, 0.6, 0.9, 0.99])
def test_a_damaged_archive_is_refused_by_name_and_not_cached(trained, tmp_path: Path,
                                                             where: float) -> None:
    """Damage deep inside the gzip stream is caught by its CRC (read to the end), whatever it
    hits: a member's bytes, a tar header (tarfile would stop there without a word)."""
    from elmo_experiments.run import load_run

    data = bytearray(trained["archive"].read_bytes())
    start = int(len(data) * where)
    data[start : start + 16] = bytes(16)
    damaged = tmp_path / "model.tar.gz"
    damaged.write_bytes(bytes(data))
    with pytest.raises(DataError, match=rf"^{damaged}: cannot read the archive \(.+\); it is "
                       r"damaged$"):
        load_run(damaged)
    assert _cached(tmp_path) == []


def _cached(tmp_path: Path) -> list[str]:
    archives = tmp_path / "cache" / "archives"
    return sorted(p.name for p in archives.iterdir()) if archives.is_dir() else []


def _repacked(source: Path, target: Path, keep: object) -> Path:
    """``source``'s members for which ``keep(name)`` holds, in a new (valid) archive."""
    with tarfile.open(source, "r:gz") as old, tarfile.open(target, "w:gz") as new:
        for member in old.getmembers():
            if keep(member.name):
                new.addfile(member, old.extractfile(member) if member.isfile() else None)
    return target


def test_an_archive_missing_a_file_is_refused_by_name(trained, tmp_path: Path) -> None:
    from elmo_experiments.run import load_run

    short = _repacked(trained["archive"], tmp_path / "short.tar.gz",
                      lambda name: not name.startswith("vocabulary/"))
    with pytest.raises(DataError, match=rf"^{short}: vocabulary/namespaces\.json is missing; "
                       r"the archive is damaged or incomplete$"):
        load_run(short)
    assert _cached(tmp_path) == []
    swapped = tmp_path / "swapped.tar.gz"  # a whole gzip stream, a member's bytes replaced
    with tarfile.open(trained["archive"], "r:gz") as old, tarfile.open(swapped, "w:gz") as new:
        for member in old.getmembers():
            data = old.extractfile(member).read() if member.isfile() else b""
            if member.name == "config.json":
                data = data.replace(b'"', b"'", 1)
            member.size = len(data)
            new.addfile(member, io.BytesIO(data) if member.isfile() else None)
    with pytest.raises(DataError, match=rf"^{swapped}: config\.json differs from its SHA-256 in "
                       r"archive\.json; the archive is damaged or incomplete$"):
        load_run(swapped)
    assert _cached(tmp_path) == []


def test_an_unfinished_extraction_in_the_cache_is_done_again(trained, tmp_path: Path) -> None:
    from elmo_experiments.data.files import sha256_of
    from elmo_experiments.run import load_run

    folder = tmp_path / "cache" / "archives" / sha256_of(trained["archive"])[:20]
    folder.mkdir(parents=True)  # as an earlier version could leave it: manifest, no vocabulary
    with tarfile.open(trained["archive"], "r:gz") as tar:
        tar.extract("archive.json", folder)
    load_run(trained["archive"])
    assert (folder / "vocabulary" / "namespaces.json").is_file()
    assert _cached(tmp_path) == [folder.name]


def test_not_an_archive_is_one_line(tmp_path: Path) -> None:
    from elmo_experiments.run import load_run

    junk = tmp_path / "model.tar.gz"
    junk.write_bytes(b"not a tar file")
    with pytest.raises(DataError, match="cannot read the archive"):
        load_run(junk)


def test_devices() -> None:
    from elmo_experiments.devices import from_cuda_device, resolve_device, trainer_device

    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert from_cuda_device(-1) == "cpu" and from_cuda_device(1) == "cuda:1"
    assert trainer_device({"device": "auto", "cuda_device": -1}) == torch.device("cpu")
    with pytest.raises(ConfigError, match="give device or cuda_device, not both"):
        trainer_device({"device": "cpu", "cuda_device": 0})
    with pytest.raises(ConfigError, match="'tpu' is not a device name"):
        resolve_device("tpu", "--device")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="CUDA is not available here"):
            resolve_device("cuda:0")


def test_the_python_api(trained, tmp_path: Path, tiny_bilm_dir: Path) -> None:
    from elmo_experiments import Elmo, Predictor, batch_to_ids, load_archive

    elmo = Elmo(str(tiny_bilm_dir / "options.json"), str(tiny_bilm_dir / "weights.hdf5"),
                num_output_representations=2, dropout=0.0)
    out = elmo(batch_to_ids([["The", "cat", "sat"], ["Hi"]]))
    assert len(out["elmo_representations"]) == 2
    assert out["elmo_representations"][0].shape == (2, 3, elmo.get_output_dim())
    assert out["mask"].tolist() == [[True, True, True], [True, False, False]]
    run = load_archive(trained["archive"])
    assert run.experiment["model"].entry.name == "crf_tagger"
    predictor = Predictor.from_path(trained["archive"])
    records = predictor.predict("John Smith lives in Paris. He works for the UN.")
    assert [r["tokens"][0] for r in records] == ["John", "He"]
    for record in records:
        assert len(record["tags"]) == len(record["tokens"])
        for span in record["spans"]:
            assert 0.0 <= span["score"] <= 1.0
            assert span["text"] == " ".join(record["tokens"][span["start"]: span["end"] + 1])
    assert predictor.predict("") == []


def _readme_python() -> str:
    import re

    section = (REPO / "README.md").read_text()
    section = section[section.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def _run_readme_python(folder: Path) -> list[str]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _readme_python()], cwd=folder,
                          capture_output=True, text=True, timeout=300,
                          env={"ELMO_CACHE_DIR": str(folder / "cache"), "PATH": "/usr/bin"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("torch.Size([2, 4, ")
    assert "[[True, True, True, True], [True, True, False, False]]" in lines[0]
    assert len(lines) == 2  # one sentence: its tags and spans
    return lines


def test_the_readme_python_example_runs_on_an_archive(trained, tmp_path: Path) -> None:
    """The README's code as written, where runs/demo/model.tar.gz is a (one-epoch) archive."""
    (tmp_path / "runs" / "demo").mkdir(parents=True)
    shutil.copy(trained["archive"], tmp_path / "runs" / "demo" / "model.tar.gz")
    _run_readme_python(tmp_path)


@pytest.mark.slow  # make demo's 20 epochs with the shipped biLM: about two minutes
def test_the_readme_python_example_runs_after_make_demo(tmp_path: Path) -> None:
    """Exactly what the README says: make demo's own command (read from the Makefile), then
    the README's code, in a fresh folder that holds only the project's experiments/."""
    import os
    import shlex
    import subprocess
    import sys

    recipe = subprocess.run(["make", "-n", "-s", "demo", "BIN=BIN", "VENV=.venv"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.replace("\\\n", " ")
    command = [line for line in recipe.splitlines() if line.startswith("BIN/elmo-exp ")]
    assert len(command) == 1, recipe
    args = shlex.split(command[0])[1:]
    (tmp_path / "experiments").symlink_to(REPO / "experiments")
    env = {k: v for k, v in os.environ.items() if k not in ("ELMO_DATA_DIR", "ELMO_WEIGHTS")}
    demo = subprocess.run([sys.executable, "-m", "elmo_experiments", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stderr[-3000:]
    _run_readme_python(tmp_path)
