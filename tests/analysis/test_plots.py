"""``elmo-exp plot``: curves and learned layer weights of real (tiny) runs, one or two side by
side, as PNG and PDF; one-line errors for what cannot be plotted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from elmo_experiments.analysis.plots import _names, read_run
from elmo_experiments.cli import cli
from elmo_experiments.errors import ConfigError, DataError
from elmo_experiments.run import train

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "experiments" / "ner.jsonnet"
FAST = ["trainer.num_epochs=2", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=8"]
TWO_MIXES = 'model.token_embedders.elmo.mixes=[{"l2":0.1},{"l2":0.1}]'
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF"}


@pytest.fixture(scope="module")
def runs(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """NER with ELMo (a tiny random biLM) at the input, and at the input and the output."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        patch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
        root = tmp_path_factory.mktemp("plots")
        train(CONFIG, root / "input", overrides=FAST)
        train(CONFIG, root / "both", overrides=[*FAST, TWO_MIXES])
    return {"input": root / "input", "both": root / "both"}


@pytest.fixture
def no_elmo(runs: dict[str, Path], tmp_path: Path) -> Path:
    """A run's epoch records without the ELMo mixes (as a baseline run writes them)."""
    folder = tmp_path / "baseline"
    folder.mkdir()
    for path in runs["input"].glob("metrics_epoch_*.json"):
        record = json.loads(path.read_text())
        record.pop("elmo_mixes")
        (folder / path.name).write_text(json.dumps(record))
    return folder


def plot(*args: str) -> Result:
    return CliRunner().invoke(cli, ["plot", *args])


@pytest.mark.parametrize("suffix", [".png", ".pdf"])
@pytest.mark.parametrize("what", ["curves", "layers", "both"])
@pytest.mark.parametrize("which", [["input"], ["input", "both"]], ids=["one", "two"])
def test_plot_writes_a_figure(runs: dict[str, Path], tmp_path: Path, suffix: str, what: str,
                              which: list[str]) -> None:
    out = tmp_path / f"figure{suffix}"
    result = plot(*[str(runs[name]) for name in which], "-o", str(out), "--what", what)
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 1000
    assert out.read_bytes().startswith(MAGIC[suffix])


def test_a_run_without_epoch_metrics_is_a_one_line_error(tmp_path: Path) -> None:
    result = plot(str(tmp_path), "-o", str(tmp_path / "x.png"))
    assert isinstance(result.exception, DataError)
    message = str(result.exception)
    assert "no metrics_epoch_N.json" in message and str(tmp_path) in message
    assert "\n" not in message
    assert not (tmp_path / "x.png").exists()


def test_layers_of_a_run_without_elmo_is_a_one_line_error(runs: dict[str, Path], no_elmo: Path,
                                                          tmp_path: Path) -> None:
    result = plot(str(runs["input"]), str(no_elmo), "--what", "layers",
                  "-o", str(tmp_path / "x.png"))
    assert isinstance(result.exception, DataError)
    assert str(no_elmo) in str(result.exception) and "no ELMo" in str(result.exception)
    assert "\n" not in str(result.exception)
    both = plot(str(runs["input"]), str(no_elmo), "-o", str(tmp_path / "y.png"))  # curves for
    assert both.exit_code == 0, both.output  # all, layer weights where there are some
    assert (tmp_path / "y.png").stat().st_size > 1000


def test_an_unknown_figure_format_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    result = plot(str(runs["input"]), "-o", str(tmp_path / "x.jpg"))
    assert isinstance(result.exception, ConfigError) and ".png" in str(result.exception)


def test_the_records_read_back(runs: dict[str, Path], tmp_path: Path) -> None:
    run = read_run(runs["both"])
    assert [r["epoch"] for r in run.epochs] == [1, 2] and run.metric == "f1"
    mixes, epoch = run.mixes()
    assert epoch == run.best_epoch
    assert [m.placement for m in mixes] == ["input", "output"]
    assert all(len(m.weights) == 3 and sum(m.weights) == pytest.approx(1, abs=1e-5)
               for m in mixes)
    training = tmp_path / "training"  # a run still training: no metrics.json yet
    training.mkdir()
    shutil.copy(runs["both"] / "metrics_epoch_1.json", training)
    assert read_run(training).mixes()[1] == 1
    assert _names([Path("/a/run"), Path("/b/run")]) == ["a/run", "b/run"]
    assert _names([Path("/a/one"), Path("/a/two")]) == ["one", "two"]
