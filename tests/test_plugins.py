"""A user's package outside the repository registers a model: ``--include-package`` and the
``elmo_experiments.plugins`` entry-point group."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "reproduction" / "ner" / "sample"

PLUGIN = '''
import torch

from elmo_experiments.config.registry import register
from elmo_experiments.metrics.accuracy import CategoricalAccuracy


class ToyTagger(torch.nn.Module):
    """A tag per token from its word embedding alone."""

    def __init__(self, vocab, embedding_dim: int = 8):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab.size("tokens"), embedding_dim)
        self.output = torch.nn.Linear(embedding_dim, vocab.size("labels"))
        self.accuracy = CategoricalAccuracy()
        self.metrics = [self.accuracy]

    def forward(self, tokens, mask, tags=None, **_):
        logits = self.output(self.embedding(tokens["tokens"]))  # (batch, seq, tags)
        output = {"logits": logits}
        if tags is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits[mask], tags[mask])
            self.accuracy.update(logits[mask], tags[mask])
        return output

    def human_readable(self, output, batch):
        return [{"tokens": meta["tokens"], "tags": row[: len(meta["tokens"])].argmax(-1).tolist()}
                for meta, row in zip(batch.metadata, output["logits"])]


register("model", "toy_tagger", context=("vocab",))(ToyTagger)
'''


def _config(tmp_path: Path) -> Path:
    config = {
        "dataset_reader": {"type": "conll2003",
                           "token_indexers": {"tokens": {"type": "single_id"}}},
        "train_data_path": str(SAMPLE / "train.txt"),
        "validation_data_path": str(SAMPLE / "dev.txt"),
        "model": {"type": "toy_tagger", "embedding_dim": 4},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 2, "validation_metric": "+accuracy",
                    "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False},
    }
    path = tmp_path / "toy.jsonnet"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def user_package(tmp_path: Path) -> Path:
    """``toy_plugin/`` (a package with a submodule that registers) in a folder of its own."""
    folder = tmp_path / "work"
    (folder / "toy_plugin").mkdir(parents=True)
    (folder / "toy_plugin" / "__init__.py").write_text("")
    (folder / "toy_plugin" / "models.py").write_text(PLUGIN)
    return folder


def _elmo_exp(*args: str, cwd: Path, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "elmo_experiments", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=300)


def test_include_package_trains_a_model_from_outside(user_package: Path, tmp_path: Path) -> None:
    config = _config(tmp_path)
    refused = _elmo_exp("validate", str(config), cwd=user_package)
    assert refused.returncode == 1
    assert "model.type: unknown model type 'toy_tagger'" in refused.stderr
    done = _elmo_exp("train", str(config), "-s", str(tmp_path / "run"),
                     "--include-package", "toy_plugin", cwd=user_package)
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["epochs_completed"] == 2  # a real two-epoch run of the user's model
    assert 0.0 <= metrics["best_validation_accuracy"] <= 100.0


CHECKS = '''
import sys
from pathlib import Path

import toy_plugin.models  # registers toy_tagger
from elmo_experiments.testing import check_model

check_model(Path(sys.argv[1]), Path(sys.argv[2]))
print("checked")
'''


def test_a_plugin_model_passes_the_shipped_model_checks(user_package: Path,
                                                        tmp_path: Path) -> None:
    """A plugin author tests a model as the core tests do: ``elmo_experiments.testing``."""
    script = user_package / "check_toy.py"
    script.write_text(CHECKS)
    done = subprocess.run([sys.executable, str(script), str(_config(tmp_path)),
                           str(tmp_path / "checks")], cwd=user_package, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "checked"


def test_an_installed_plugin_registers_through_its_entry_point(user_package: Path,
                                                              tmp_path: Path) -> None:
    info = user_package / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[elmo_experiments.plugins]\ntoy = toy_plugin.models\n")
    done = _elmo_exp("validate", str(_config(tmp_path)), cwd=tmp_path,
                     env={"PYTHONPATH": str(user_package)})
    assert done.returncode == 0, done.stderr
    assert "ok (model toy_tagger" in done.stdout


def test_a_module_that_does_not_import_is_one_line(tmp_path: Path) -> None:
    done = _elmo_exp("validate", str(_config(tmp_path)), "--include-package", "no_such_module",
                     cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == ("error: --include-package no_such_module: cannot import it "
                                   "(No module named 'no_such_module')")
