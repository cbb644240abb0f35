"""Any language, end to end: a tiny biLM pretrained on the embedded German sample (raw text, spaCy's
German rules) serves the German NER sample, and ``predict --text`` splits German text with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elmo_experiments.bilm.pretraining.corpus import read_sentences
from elmo_experiments.bilm.pretraining.run import pretrain, validate_pretrain
from elmo_experiments.cli import cli
from elmo_experiments.config.loader import load_config
from elmo_experiments.errors import ConfigError
from elmo_experiments.run import train

ROOT = Path(__file__).resolve().parents[3]
TINY_DE = ROOT / "experiments" / "bilm" / "tiny_de.jsonnet"
NER = ROOT / "experiments" / "ner.jsonnet"
SAMPLE = "reproduction/ner/sample/de/"
GERMAN_NER = [f"train_data_path={ROOT / SAMPLE / 'train.txt'}",
              f"validation_data_path={ROOT / SAMPLE / 'dev.txt'}",
              f"test_data_path={ROOT / SAMPLE / 'test.txt'}",
              "dataset_reader.language=de", "trainer.num_epochs=2", "trainer.patience=null",
              "trainer.progress_bar=false", "data_loader.batch_size=8"]
TEXT = "Anna Berger kam am 3. Oktober nach Talheim. Sie arbeitet bei der Nordbahn."


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The German biLM (3 epochs) and the NER tagger that uses it (2 epochs)."""
    root = tmp_path_factory.mktemp("german")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        pretrain(TINY_DE, root / "bilm", overrides=["trainer.num_epochs=3"])
        patch.setenv("ELMO_WEIGHTS", str(root / "bilm" / "bilm"))
        train(NER, root / "ner", overrides=GERMAN_NER)
    return {"bilm": root / "bilm", "ner": root / "ner"}


def test_the_german_corpus_is_split_with_german_rules() -> None:
    text = ROOT / "reproduction" / "bilm" / "sample" / "de" / "text.txt"
    german = list(read_sentences(str(text), "raw", language="de"))
    assert len(german) == 400  # the generator's 100 paragraphs of 4 sentences
    assert any(s[:2] == ["Am", "3."] for s in german)  # an ordinal, not an end
    assert len(list(read_sentences(str(text), "raw"))) > 400  # English rules: "3." ends one


def test_a_german_biLM_pretrains_and_serves_a_german_tagger(runs: dict[str, Path]) -> None:
    bilm = json.loads((runs["bilm"] / "metrics.json").read_text())
    assert bilm["epochs_completed"] == 3 and bilm["embedded_sample"] is True
    assert bilm["best_validation_perplexity"] < bilm["corpus"]["types"]  # it learnt something
    vocab = (runs["bilm"] / "bilm" / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert "Schlüssel" in vocab and "„" in vocab
    ner = json.loads((runs["ner"] / "metrics.json").read_text())
    assert ner["epochs_completed"] == 2 and "test_f1" in ner
    config = json.loads((runs["ner"] / "config.json").read_text())
    assert config["model"]["token_embedders"]["elmo"]["weights"] == str(runs["bilm"] / "bilm")
    assert config["dataset_reader"]["language"] == "de"


def test_predict_text_splits_with_the_readers_language(runs: dict[str, Path]) -> None:
    runner = CliRunner()
    text = runs["ner"] / "input.txt"
    text.write_text(TEXT + "\n", encoding="utf-8")
    german = runner.invoke(cli, ["predict", str(runs["ner"]), str(text), "--format", "text"])
    assert german.exit_code == 0, german.output
    records = [json.loads(line) for line in german.output.splitlines()]
    assert [r["tokens"] for r in records] == [
        ["Anna", "Berger", "kam", "am", "3.", "Oktober", "nach", "Talheim", "."],
        ["Sie", "arbeitet", "bei", "der", "Nordbahn", "."]]
    assert all(len(r["tags"]) == len(r["tokens"]) for r in records)
    given = runner.invoke(cli, ["predict", str(runs["ner"]), "--text", TEXT])
    assert given.exit_code == 0 and given.output == german.output  # the text itself
    english = runner.invoke(cli, ["predict", str(runs["ner"]), "--text", TEXT,
                                  "--language", "en"])
    assert len(english.output.splitlines()) == 3  # English rules end a sentence at "3."
    unknown = runner.invoke(cli, ["predict", str(runs["ner"]), str(text), "--format", "text",
                                  "--language", "zz"])
    assert isinstance(unknown.exception, ConfigError)
    assert "unknown language code 'zz'" in str(unknown.exception)


def test_an_unknown_language_is_a_config_error() -> None:
    config = load_config(TINY_DE, overrides=["corpus.train.0.language=zz"])
    with pytest.raises(ConfigError, match=r"corpus\.train\.0\.language: unknown language "
                                          r"code 'zz'"):
        validate_pretrain(config, "tiny_de")
