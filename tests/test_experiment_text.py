"""A task's text as its experiment reads it: the corpus of domain fine-tuning and of
``elmo-exp perplexity --format experiment``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_experiments.bilm.pretraining.corpus import prepare_corpus
from elmo_experiments.errors import DataError
from elmo_experiments.experiment_text import experiment_sentences

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"


@pytest.fixture(autouse=True)
def _samples(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ELMO_DATA_DIR", "ELMO_VECTORS_DIR", "ELMO_WEIGHTS", "ELMO_SIZE"):
        monkeypatch.delenv(name, raising=False)


def test_ner_reads_each_training_sentence_once_without_labels() -> None:
    sentences = list(experiment_sentences(EXPERIMENTS / "ner.jsonnet", "train"))
    # the sample file's sentences (blank-line separated, -DOCSTART- lines aside), first column
    blocks = (ROOT / "reproduction/ner/sample/train.txt").read_text().split("\n\n")
    expected = []
    for block in blocks:
        words = [line.split()[0] for line in block.splitlines()
                 if line.strip() and not line.startswith("-DOCSTART-")]
        if words and words not in expected:
            expected.append(words)
    assert sentences == expected
    assert all(tag not in {w for s in sentences for w in s} for tag in ("B-PER", "I-ORG"))


def test_reading_the_text_needs_no_model_files(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    """The model's word vectors (here a folder without them) are not read, so not required;
    training the same config still says they are missing."""
    from elmo_experiments.config.loader import load_config
    from elmo_experiments.errors import ConfigError
    from elmo_experiments.experiment import validate_experiment

    monkeypatch.setenv("ELMO_VECTORS_DIR", str(tmp_path))
    assert list(experiment_sentences(EXPERIMENTS / "ner.jsonnet", "train"))
    with pytest.raises(ConfigError, match=r"pretrained_file: .*gutenberg_50d\.txt: no such data"):
        validate_experiment(load_config(EXPERIMENTS / "ner.jsonnet"), check_paths=True)


def test_squad_passages_and_questions_appear_once() -> None:
    sentences = list(experiment_sentences(EXPERIMENTS / "squad.jsonnet", "train"))
    data = json.loads((ROOT / "reproduction/squad/sample/train.json").read_text())["data"]
    paragraphs = [p for article in data for p in article["paragraphs"]]
    questions = {q["question"] for p in paragraphs for q in p["qas"]}
    assert len(sentences) == len({tuple(s) for s in sentences})  # distinct
    # every paragraph once (not once per question) and the distinct questions
    assert len(sentences) == len({p["context"] for p in paragraphs}) + len(questions)


def test_sst_reads_sentences_not_every_phrase_and_dev_is_its_own_file() -> None:
    phrases = list(experiment_sentences(EXPERIMENTS / "sst5.jsonnet", "train"))
    train = list(experiment_sentences(EXPERIMENTS / "sst5.jsonnet", "train", reader="evaluation"))
    assert len(phrases) > 2 * len(train)  # the training reader: every phrase of every tree
    lines = [line for line in (ROOT / "reproduction/sst5/sample/train.txt").read_text().splitlines()
             if line.strip()]
    assert len(train) == len({line for line in lines})
    dev = list(experiment_sentences(EXPERIMENTS / "sst5.jsonnet", "validation"))
    assert dev and not {tuple(s) for s in dev} & {tuple(s) for s in train}


def test_coref_reads_documents_sentence_by_sentence() -> None:
    sentences = list(experiment_sentences(EXPERIMENTS / "coref.jsonnet", "train"))
    assert sentences and all(isinstance(word, str) for s in sentences for word in s)


def test_unknown_split_and_reader_are_one_line_errors() -> None:
    with pytest.raises(DataError, match="split 'dev' is not one of train, validation, test"):
        list(experiment_sentences(EXPERIMENTS / "ner.jsonnet", "dev"))
    with pytest.raises(DataError, match="reader 'tests' is not one of training, evaluation"):
        list(experiment_sentences(EXPERIMENTS / "ner.jsonnet", "train", reader="tests"))


def test_the_training_reader_keeps_its_subset(tmp_path: Path) -> None:
    """A CPU variant's training reader reads a subset (SRL: its first N sentences); fine-tuning
    reads that subset, not the whole file."""
    config = tmp_path / "srl_cut.jsonnet"
    config.write_text(f"(import '{EXPERIMENTS / 'srl.jsonnet'}') + "
                      "{ dataset_reader+: { max_sentences: 3 } }")
    full = list(experiment_sentences(EXPERIMENTS / "srl.jsonnet", "train"))
    cut = list(experiment_sentences(config, "train"))
    assert len(full) > 3 and cut == full[:3]


def test_a_prepared_corpus_of_format_experiment(tmp_path: Path) -> None:
    source = {"path": str(EXPERIMENTS / "ner.jsonnet"), "format": "experiment",
              "split": "validation", "ext_vars": {}}
    corpus = prepare_corpus([], {"dev": source}, tmp_path, heldout_every=0,
                            max_sentence_length=60)
    expected = sum(len(s) for s in experiment_sentences(EXPERIMENTS / "ner.jsonnet",
                                                        "validation"))
    assert int((corpus.ids("dev") >= 0).sum()) == expected
