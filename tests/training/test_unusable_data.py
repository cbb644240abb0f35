"""Data a run cannot use stops it before the run directory is touched, with one line naming
the file: a split left without instances by its reader's drops (how many were read, why each
kind was dropped), an instance longer than ``data_loader.max_instance_tokens``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from elmo_experiments.errors import DataError
from elmo_experiments.run import train

ROOT = Path(__file__).resolve().parents[2]
FAST = ["trainer.num_epochs=1", "trainer.progress_bar=false"]
SRL_SAMPLE = ROOT / "reproduction" / "srl" / "sample"


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch):
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)


def squad_file(path: Path, context: str, *answers: tuple[str, int]) -> Path:
    """One paragraph, one question per answer."""
    questions = [{"id": f"q{n}", "question": "Which one?",
                  "answers": [{"text": text, "answer_start": start}]}
                 for n, (text, start) in enumerate(answers)]
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "T", "paragraphs": [
        {"context": context, "qas": questions}]}]}), encoding="utf-8")
    return path


def srl_without_predicates(path: Path) -> Path:
    """CoNLL-2005 columns with no target lemma: sentences, but no predicate to label."""
    rows = ["The DT (S1(S(NP* * - -", "cat NN *) * - -", "slept VBD (VP*)) * - -", "",
            "Quiet JJ (S1(ADJP*)) * - -", ""]
    path.write_text("\n".join(rows), encoding="utf-8")
    return path


def test_squad_answers_missing_from_their_contexts_leave_no_training_instances(tmp_path):
    data = squad_file(tmp_path / "train.json", "The bridge opened in 1893.",
                      ("1901", 0), ("in Oslo", 3))
    run_dir = tmp_path / "run"
    with pytest.raises(DataError) as info:
        train(ROOT / "experiments" / "squad_baseline.jsonnet", run_dir,
              overrides=[*FAST, f"train_data_path={data}"])
    assert str(info.value) == (f"{data}: no training instances: 2 questions read, 2 dropped "
                               f"(2 whose answers are not found in the passage)")
    assert not run_dir.exists()


def test_squad_answers_beyond_the_passage_limit_are_counted_apart(tmp_path):
    context = "One two three four five six seven eight nine ten eleven twelve."
    data = squad_file(tmp_path / "train.json", context, ("eleven", context.index("eleven")),
                      ("ten", context.index("ten")), ("thirteen", 0))
    with pytest.raises(DataError) as info:
        train(ROOT / "experiments" / "squad_baseline.jsonnet", tmp_path / "run",
              overrides=[*FAST, f"train_data_path={data}",
                         "dataset_reader.passage_length_limit=5"])
    assert str(info.value) == (f"{data}: no training instances: 3 questions read, 3 dropped "
                               f"(2 with no answer inside the first 5 passage tokens, 1 whose "
                               f"answers are not found in the passage)")


@pytest.mark.parametrize("split", ["train", "validation"])
def test_srl_data_without_predicates_is_no_data_to_train_or_validate_on(tmp_path, split):
    data = srl_without_predicates(tmp_path / f"{split}.txt")
    run_dir = tmp_path / "run"
    with pytest.raises(DataError) as info:
        train(ROOT / "experiments" / "srl_baseline.jsonnet", run_dir,
              overrides=[*FAST, f"{split}_data_path={data}"])
    what = {"train": "training", "validation": "validation"}[split]
    assert str(info.value) == (f"{data}: no {what} instances: 2 sentences read, 2 dropped (2 "
                               f"without a predicate)")
    assert not run_dir.exists()


def test_the_command_line_says_it_in_one_line(tmp_path):
    data = srl_without_predicates(tmp_path / "train.txt")
    env = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    result = subprocess.run(
        [sys.executable, "-m", "elmo_experiments", "train", "experiments/srl_baseline.jsonnet",
         "-s", str(tmp_path / "run"), "-o", f"train_data_path={data}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        f"error: {data}: no training instances: 2 sentences read, 2 dropped (2 without a "
        f"predicate)")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_passage_over_max_instance_tokens_stops_before_any_tensor(tmp_path):
    words = [f"w{n}" for n in range(12_000)]
    context = " ".join(words)
    dev = squad_file(tmp_path / "dev.json", context, ("w5", context.index("w5 ")))
    run_dir = tmp_path / "run"
    with pytest.raises(DataError) as info:
        train(ROOT / "experiments" / "squad_baseline.jsonnet", run_dir,
              overrides=[*FAST, f"validation_data_path={dev}"])
    assert str(info.value) == (f"{dev}: instance 1: passage: 12,000 tokens, over "
                               f"data_loader.max_instance_tokens (10,000); raise it to read "
                               f"such instances, or have the reader cut them")
    assert not run_dir.exists()
