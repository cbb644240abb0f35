"""GAP's model passes the checks every task model passes (``elmo_experiments.testing``), with
the embedded sample, baseline and ELMo (the tiny biLM); and it serves through its
registration."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.testing import check_model


@pytest.fixture
def sample_env(monkeypatch: pytest.MonkeyPatch, tiny_bilm_dir: Path) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
    monkeypatch.setenv("ELMO_SIZE", "cpu")


@pytest.mark.parametrize("name", ["gap_baseline", "gap"])
def test_the_gap_model_passes_the_model_checks(name: str, sample_env: None,
                                               tmp_path: Path) -> None:
    check_model(name, tmp_path)


def test_a_trained_gap_model_is_served(sample_env: None, tmp_path: Path) -> None:
    from elmo_experiments.run import train
    from elmo_experiments.serve.models import Limits, ServedModel

    config = Path(__file__).resolve().parents[3] / "experiments" / "gap_baseline.jsonnet"
    train(config, tmp_path / "run", overrides=["trainer.num_epochs=1",
                                               "trainer.progress_bar=false"])
    served = ServedModel("gap", tmp_path / "run" / "model.tar.gz", "cpu")
    assert served.task == "gap" and "pronoun_offset" in served.describe()["inputs"]
    text = "Ann Berg met Cleo Dunn in Rome, and she liked her."
    item = {"text": text, "pronoun": "she", "pronoun_offset": text.index("she"),
            "a": "Ann Berg", "a_offset": 0, "b": "Cleo Dunn", "b_offset": 13}
    [[record]] = served.predict({"instances": [item]}, Limits())["results"]
    assert set(record) >= {"a_coref", "b_coref", "probabilities"}
    assert not (record["a_coref"] and record["b_coref"])
    from elmo_experiments.serve.task_serving import RequestError

    with pytest.raises(RequestError) as refused:  # a text alone is no GAP input
        served.predict({"texts": [text]}, Limits())
    assert str(refused.value).startswith("texts: a text alone is no input of a gap model, "
                                         "which takes text, pronoun, a, b and their")
    assert str(refused.value).endswith(": give instances")
