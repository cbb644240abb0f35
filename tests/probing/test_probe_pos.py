"""The POS probe end to end on a tiny sample with the tiny random biLM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from probe_samples import write_ud

from elmo_experiments.cli import cli
from elmo_experiments.probing.pos import ProbeSettings, run_pos_probe, train_linear
from elmo_experiments.probing.pos_data import load_pos


def test_linear_probe_learns_separable_tags() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=300)
    x = (np.eye(3)[y] * 5 + rng.normal(0, 0.1, size=(300, 3))).astype(np.float16)
    model, epoch = train_linear(x, y, x, y, 3, ProbeSettings(epochs=20, lr=0.05))
    predicted = model(__import__("torch").from_numpy(x.astype(np.float32))).argmax(1).numpy()
    assert (predicted == y).mean() == 1.0
    assert 1 <= epoch <= 20


def test_pos_probe_per_layer_and_deterministic(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    write_ud(tmp_path)
    splits = load_pos("ud_ewt", tmp_path, "upos")
    settings = ProbeSettings(epochs=3, seed=1)
    first = run_pos_probe(str(tiny_bilm_dir), splits, settings)
    second = run_pos_probe(str(tiny_bilm_dir), splits, settings)
    assert first == second
    assert list(first["layers"]) == ["0", "1", "2"]
    for row in first["layers"].values():
        for split in ("dev", "test"):
            assert 0.0 <= row[split]["accuracy"] <= 100.0
            assert row[split]["total"] == 7
            assert row[split]["accuracy"] == round(100 * row[split]["correct"] / 7, 2)
    assert first["train_tokens"] == 21


def test_probe_pos_command(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    write_ud(tmp_path)
    out = tmp_path / "results.json"
    result = CliRunner().invoke(cli, ["probe", "pos", "--weights", str(tiny_bilm_dir),
                                      "--data", "ud_ewt", "--data-root", str(tmp_path),
                                      "--epochs", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "dev acc" in result.output
    saved = json.loads(out.read_text())
    assert saved["data"] == "ud_ewt" and saved["tagset"] == "xpos"
    assert set(saved["layers"]) == {"0", "1", "2"}
    from elmo_experiments.bilm.pretrained import resolve_bilm
    from elmo_experiments.bilm.weights import weights_digest

    # what produced it: the biLM's digest, the code, the command line
    assert saved["provenance"]["bilm_sha1"] == weights_digest(*resolve_bilm(str(tiny_bilm_dir)))
    assert saved["provenance"]["code"] and saved["provenance"]["command"].startswith("elmo-exp")
