"""``elmo-exp pretrain --dry-run``: the corpus's figures and the cost, nothing written; settings
that cannot work are one-line errors before anything trains."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from elmo_experiments.bilm.pretraining import feasibility as module
from elmo_experiments.bilm.pretraining.dry_run import dry_run
from elmo_experiments.bilm.pretraining.run import pretrain
from elmo_experiments.cli import cli
from elmo_experiments.errors import ConfigError, DataError

ROOT = Path(__file__).resolve().parents[3]
TINY = str(ROOT / "experiments" / "bilm" / "tiny.jsonnet")
TINY_DE = str(ROOT / "experiments" / "bilm" / "tiny_de.jsonnet")


def test_the_dry_run_prints_the_cost_and_writes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for run_dir in (tmp_path / "absent", empty):
        result = CliRunner().invoke(cli, ["pretrain", TINY, "-s", str(run_dir), "--dry-run"])
        assert result.exit_code == 0, result.output
        for words in ("training tokens", "vocabulary: ", "held-out OOV rate", "steps per epoch",
                      "s per step", "per epoch", "for 5 epochs", "peak memory (RSS)"):
            assert words in result.output
    assert not (tmp_path / "absent").exists()
    assert list(empty.iterdir()) == []


def test_a_prepared_dir_is_filled_for_the_run_to_reuse(tmp_path: Path) -> None:
    prepared = f"corpus.prepared_dir={tmp_path / 'corpus'}"
    dry_run(TINY_DE, overrides=[prepared], steps=1)
    assert (tmp_path / "corpus" / "fingerprint.json").is_file()
    assert dry_run(TINY_DE, overrides=[prepared], steps=1)["train_sentences"] == 380


def test_the_figures_follow_the_corpus_and_its_caps() -> None:
    report = dry_run(TINY_DE, steps=2)
    assert report["train_sentences"] == 380 and report["heldout_tokens"] > 0  # every 20th
    assert report["vocab_size"] == report["types"] + 3  # specials; the cap (200) not reached
    assert report["train_coverage"] == 1.0
    capped = dry_run(TINY_DE, overrides=["corpus.vocab_size=50", "corpus.max_sentence_length=8"],
                     steps=2)
    assert capped["vocab_size"] == 50 and capped["train_coverage"] < 1.0
    assert capped["heldout_oov_rate"] > 0 and capped["sentences_at_cap"] > 0
    assert capped["train_sentences"] > report["train_sentences"]  # long ones cut into pieces
    assert report["steps_per_epoch"] == 12 and report["timed_steps"] == 2  # 380 / batches of 32
    assert report["estimated_epoch_s"] == pytest.approx(
        12 * report["seconds_per_step"]
        + report["validation_batches"] * report["seconds_per_eval_batch"])
    assert report["estimated_schedule_s"] >= 10 * report["estimated_epoch_s"]
    assert report["peak_memory_gib"] > 0


def test_a_softmax_that_does_not_fit_is_one_line_before_training(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "free_memory", lambda device: 1 << 20)  # 1 MiB free
    with pytest.raises(ConfigError, match=r"corpus\.vocab_size: a softmax over 174 words needs "
                                          r"about .* GiB .* but cpu has 0\.0 GiB free"):
        dry_run(TINY_DE)
    with pytest.raises(ConfigError, match=r"corpus\.vocab_size"):
        pretrain(TINY_DE, tmp_path / "run")
    assert not (tmp_path / "run" / "config.json").exists()


def test_a_batch_cap_below_the_longest_sentence_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        dry_run(TINY_DE, overrides=["data_loader.max_tokens=10"])
    assert "data_loader.max_tokens: 10 is below the corpus's longest sentence, 14 tokens" in str(
        error.value)
    assert "\n" not in str(error.value)
    with pytest.raises(ConfigError, match=r"data_loader\.max_tokens"):
        pretrain(TINY_DE, tmp_path / "run", overrides=["data_loader.max_tokens=10"])
    assert not (tmp_path / "run" / "config.json").exists()


def test_timed_batches_are_spread_and_scaled_by_their_padded_size() -> None:
    """Hand-computed: batches of 2x3, 1x5 and 3x2 padded tokens (6, 5, 6); timing the 5-token
    batch alone at 1 s gives 0.2 s a padded token, so a typical batch of 17/3 takes 17/15 s."""
    import numpy as np

    from elmo_experiments.bilm.pretraining.dry_run import (
        _Some,
        padded_tokens,
        spread,
        typical_seconds,
    )

    assert spread(10, 3, skip=1) == [1, 4, 7] and spread(3, 10) == [0, 1, 2]
    assert spread(1, 5, skip=1) == []

    class Loader:  # the two things the timing reads of an LmLoader
        spans = np.array([[0, 3], [4, 6], [7, 12], [13, 15], [16, 17], [18, 20]])

        def groups(self, epoch: int) -> list[list[int]]:
            return [[0, 1], [2], [3, 4, 5]]

        def num_batches(self, epoch: int) -> int:
            return 3

    loader = Loader()
    assert padded_tokens(loader) == 6 + 5 + 6 and padded_tokens(loader, [1]) == 5
    assert typical_seconds(1.0, _Some(loader, [1])) == pytest.approx(17 / 15)


@pytest.mark.parametrize("text", ["", "\n\n  \n"], ids=["empty", "blank-lines"])
def test_an_empty_corpus_is_named_by_the_dry_run_and_by_a_run(tmp_path: Path, text: str) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    source = f'corpus.train=[{{"path": "{corpus}", "format": "tokenized"}}]'
    said = (f"corpus.train: no sentences in {corpus} (empty, or blank lines only): a biLM "
            f"needs text to learn from")
    result = CliRunner().invoke(cli, ["pretrain", TINY, "-s", str(tmp_path / "run"),
                                      "--dry-run", "-o", source])
    assert result.exit_code != 0 and str(result.exception) == said
    with pytest.raises(Exception, match="no sentences in") as info:
        pretrain(TINY, tmp_path / "run", overrides=[source])
    assert str(info.value) == said


def test_a_heldout_share_that_takes_every_sentence_is_named(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one sentence only .\n", encoding="utf-8")
    source = f'corpus.train=[{{"path": "{corpus}", "format": "tokenized"}}]'
    with pytest.raises(Exception, match=r"corpus.heldout_every: 1 holds out all 1 sentences"):
        dry_run(TINY, overrides=[source, "corpus.heldout_every=1"], steps=1)


def test_no_training_source_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["pretrain", TINY_DE, "-s", str(tmp_path / "run"),
                                      "--dry-run", "-o", "corpus.train=[]"])
    assert result.exit_code != 0
    assert str(result.exception).endswith("corpus.train: no sources: give at least one")


def test_a_corpus_of_one_batch_is_timed_on_that_batch(tmp_path: Path) -> None:
    """The first batch of an epoch is left out of the timing, unless it is the only one."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a b c d e .\nf g .\n", encoding="utf-8")  # the second: held out
    source = f'corpus.train=[{{"path": "{corpus}", "format": "tokenized"}}]'
    report = dry_run(TINY, overrides=[source, "corpus.heldout_every=2"], steps=3)
    assert report["steps_per_epoch"] == 1 and report["timed_steps"] == 1
    assert report["seconds_per_step"] > 0 and report["estimated_epoch_s"] > 0
    assert report["types"] == 6  # the training text's, not the evaluation sets' too


@pytest.mark.parametrize("text, every", [("one two .\nthree four .\n", 20),
                                         ("only one .\n", 2)], ids=["2-of-20", "1-of-2"])
def test_an_empty_heldout_split_is_named_by_the_dry_run_as_by_a_run(tmp_path: Path, text: str,
                                                                    every: int) -> None:
    """The dry run passed ("0 held out") where the run failed, and the run's error named its
    staging folder (``RUN/.corpus.XXXXXXXX``), deleted by then: both name the setting and the
    sources."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    overrides = [f'corpus.train=[{{"path": "{corpus}", "format": "tokenized"}}]',
                 f"corpus.heldout_every={every}"]
    said = (f"corpus.heldout_every: {every} holds out none of the {text.count(chr(10))} "
            f"training sentences of {corpus}, and model selection needs held-out sentences; "
            f"lower it, or give more text")
    result = CliRunner().invoke(cli, ["pretrain", TINY, "-s", str(tmp_path / "run"),
                                      "--dry-run", *[x for o in overrides for x in ("-o", o)]])
    assert result.exit_code != 0 and str(result.exception) == said
    with pytest.raises(DataError) as info:
        pretrain(TINY, tmp_path / "run", overrides=overrides)
    assert str(info.value) == said
    assert not list((tmp_path / "run").glob(".corpus.*"))


def _both_refuse(overrides: list[str], tmp_path: Path, said: str) -> None:
    """The dry run and a real run refuse the config with the same one line."""
    for attempt in (lambda: dry_run(TINY, overrides=overrides, steps=1),
                    lambda: pretrain(TINY, tmp_path / "run", overrides=overrides)):
        with pytest.raises(DataError) as info:
            attempt()
        assert str(info.value) == said


def test_a_corpus_of_nul_bytes_is_refused_by_the_dry_run_and_by_a_run(tmp_path: Path) -> None:
    """Four lines of NUL bytes (a zero-filled file) trained and exported a biLM."""
    corpus = tmp_path / "zeros.txt"
    corpus.write_bytes((b"\0" * 32 + b"\n") * 4)
    overrides = [f'corpus.train=[{{"path": "{corpus}", "format": "tokenized"}}]',
                 "corpus.heldout_every=2"]
    said = f"{corpus}:1: NUL bytes, not text (a binary or damaged file, or UTF-16?)"
    _both_refuse(overrides, tmp_path, said)
    assert not (tmp_path / "run" / "bilm").exists()


def test_an_evaluation_set_of_blank_lines_is_named_by_the_dry_run_and_by_a_run(tmp_path: Path
                                                                               ) -> None:
    """It passed both, and the run then wrote no ``x_perplexity``, without a warning."""
    blank = tmp_path / "blank.txt"
    blank.write_text("   \n\n", encoding="utf-8")
    overrides = [f'corpus.evaluation=[{{"name": "x", "path": "{blank}", "format": "raw"}}]']
    said = (f"corpus.evaluation x: no sentences in {blank} (empty, or blank lines only): no "
            f"perplexity to measure on it")
    _both_refuse(overrides, tmp_path, said)


def test_a_prepared_dir_that_is_a_file_is_named_by_the_dry_run(tmp_path: Path) -> None:
    """It was ``[Errno 17] File exists: '.../plain.txt'``."""
    plain = tmp_path / "plain.txt"
    plain.write_text("a file\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        dry_run(TINY, overrides=[f"corpus.prepared_dir={plain}"], steps=1)
    assert str(info.value) == (f"{plain}: a file, not a folder; a prepared corpus is a folder "
                               f"(corpus.prepared_dir names a new or empty one, or one "
                               f"prepared before)")
