"""The elmo-exp command line: train, evaluate, predict, score, validate, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "reproduction" / "ner" / "sample"

def elmo_exp(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    return subprocess.run([sys.executable, "-m", "elmo_experiments", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, input=stdin, timeout=600)


@pytest.fixture
def run_dir(learned_ner_run: Path) -> Path:
    return learned_ner_run


def test_train_refuses_existing_directory(run_dir):
    result = elmo_exp("train", "experiments/ner_baseline.jsonnet", "-s", str(run_dir))
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "--force" in result.stderr
    assert "Traceback" not in result.stderr


def test_evaluate_matches_training_test_metrics_and_conlleval(run_dir, tmp_path):
    conll = tmp_path / "predictions.conll"
    jsonl = tmp_path / "predictions.jsonl"
    result = elmo_exp("evaluate", str(run_dir), str(SAMPLE / "test.txt"),
                      "--official-output", str(conll), "--predictions", str(jsonl))
    assert result.returncode == 0, result.stderr
    metrics = json.loads(result.stdout)
    trained = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["f1"] == pytest.approx(trained["test_f1"], abs=1e-9)
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(records) == 20 and all(len(r["tokens"]) == len(r["tags"]) for r in records)
    # The IOB1 file written for conlleval scores exactly as the internal (BIOUL) metric.
    report = elmo_exp("score", "ner", str(conll))
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    assert lines[0].startswith("processed ") and "phrases; found:" in lines[0]
    assert f"FB1: {metrics['f1']:6.2f}" in lines[1]
    assert metrics["conlleval_f1"] == pytest.approx(metrics["f1"], abs=1e-9)
    assert f"FB1: {metrics['conlleval_f1']:6.2f}" in lines[1]


def test_the_dataset_level_conlleval_equals_the_streamed_metric_every_epoch(run_dir):
    """NER's conlleval (scored from its own IOB1 format) and the streamed BIOUL span F1 agree on
    every phrase figure (tag accuracy differs: it counts IOB1 tags, not BIOUL ones)."""
    for path in sorted(run_dir.glob("metrics_epoch_*.json")):
        record = json.loads(path.read_text())
        for key in ("f1", "precision", "recall", "f1-PER", "recall-ORG"):
            if f"validation_{key}" in record:
                assert record[f"validation_conlleval_{key}"] == pytest.approx(
                    record[f"validation_{key}"], abs=1e-9), (path.name, key)
    trained = json.loads((run_dir / "metrics.json").read_text())
    assert trained["test_conlleval_f1"] == pytest.approx(trained["test_f1"], abs=1e-9)


def test_predict_data_file_in_input_order(run_dir):
    result = elmo_exp("predict", str(run_dir), str(SAMPLE / "dev.txt"))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    first = (SAMPLE / "dev.txt").read_text().split("\n\n")[1].splitlines()
    assert records[0]["tokens"] == [line.split()[0] for line in first]
    assert len(records) == 20


def test_predict_raw_text(run_dir, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("Maria Lindqvist said on Monday that Velto Bank would open an office. "
                    "Shares rose.\n\nPolice in Tarvik arrested 3 people.\n")
    result = elmo_exp("predict", str(run_dir), str(text), "--format", "text")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["tokens"][0] for r in records] == ["Maria", "Shares", "Police"]
    assert records[0]["tokens"][-1] == "."
    assert all(len(r["tokens"]) == len(r["tags"]) for r in records)

def test_predict_reads_raw_text_from_standard_input(run_dir, monkeypatch):
    import io

    from elmo_experiments.predict import predict_lines

    text = "Maria Lindqvist said on Monday that Velto Bank would open an office. Shares rose."
    monkeypatch.setattr("sys.stdin", io.StringIO(text + "\n"))
    from_stdin = list(predict_lines(run_dir, "-"))  # - : raw text, as the command reads it
    assert from_stdin == list(predict_lines(run_dir, texts=(text,)))
    assert [r["tokens"][0] for r in from_stdin] == ["Maria", "Shares"]


def test_predict_takes_a_sentence_and_json_lines(run_dir, tmp_path):
    """The common case is obvious (--text "..."); JSON lines of inputs as AllenNLP's predict
    takes them."""
    sentence = "Maria Lindqvist said on Monday that Velto Bank would open an office."
    given = elmo_exp("predict", str(run_dir), "--text", sentence, "--text", "Shares rose.")
    assert given.returncode == 0, given.stderr
    records = [json.loads(line) for line in given.stdout.splitlines()]
    assert [r["tokens"][0] for r in records] == ["Maria", "Shares"]
    from elmo_experiments.predict import predict_lines

    lines = tmp_path / "inputs.jsonl"
    lines.write_text(json.dumps({"text": sentence}) + "\n\n"
                     + json.dumps({"tokens": ["Shares", "rose", "."]}) + "\n")
    first, second = predict_lines(run_dir, str(lines), input_format_name="jsonl")
    assert first == records[0]  # the same text, the same prediction
    assert second["tokens"] == ["Shares", "rose", "."] and len(second["tags"]) == 3


def test_predict_errors_say_what_was_expected(run_dir, tmp_path):
    sentence = "Maria Lindqvist said on Monday that Velto Bank would open an office."
    lines = tmp_path / "inputs.jsonl"
    mistaken = elmo_exp("predict", str(run_dir), sentence)
    assert mistaken.returncode == 1 and mistaken.stderr.splitlines() == [
        f"error: {sentence}: no such file (INPUT is a file to predict: the task's data, raw "
        f"text with --format text, or JSON lines; to predict a sentence, give it as --text "
        f'"..."; - reads standard input)']
    from elmo_experiments.errors import DataError
    from elmo_experiments.predict import predict_lines

    for text, said in (('{"text": "fine"}\n{"tokens": "not a list"}\n', f"{lines}, line 2: tokens"),
                       ("[1, 2]\n", f"{lines}, line 1: must be a JSON object, got list"),
                       ("{oops\n", f"{lines}, line 1: not a JSON object (")):
        lines.write_text(text)
        with pytest.raises(DataError) as info:
            list(predict_lines(run_dir, str(lines), input_format_name="jsonl"))
        assert str(info.value).startswith(said) and "\n" not in str(info.value)


def test_score_ner_report(tmp_path):
    # Hand-computed: gold chunks PER(0-1), LOC(3), LOC(4) [B- splits adjacent LOCs];
    # guessed PER(0-1) correct, LOC(3-4) wrong span, ORG(6) spurious.
    path = tmp_path / "scored.txt"
    path.write_text("Ada I-PER I-PER\nBrennan I-PER I-PER\nvisited O O\nLake I-LOC I-LOC\n"
                    "Oron B-LOC I-LOC\nand O O\nCorvane O I-ORG\n\n")
    result = elmo_exp("score", "ner", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "processed 7 tokens with 3 phrases; found: 3 phrases; correct: 1.\n"
        "accuracy:  71.43%; precision:  33.33%; recall:  33.33%; FB1:  33.33\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "              ORG: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
    )


def test_compare_bootstraps_two_runs_on_their_test_data(run_dir, tmp_path, trained_run):
    short = trained_run("ner_baseline")  # one epoch
    output = tmp_path / "compare.json"
    result = elmo_exp("compare", str(short), str(run_dir), "--samples", "300",
                      "--output", str(output))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert json.loads(output.read_text()) == report
    bootstrap = report["bootstrap"]
    for side, run in (("a", short), ("b", run_dir)):  # the whole test set, as training scored it
        test_f1 = json.loads((run / "metrics.json").read_text())["test_conlleval_f1"]
        assert report[side]["conlleval_f1"] == pytest.approx(test_f1, abs=1e-9)
        assert report[side]["recorded"] == {"test_conlleval_f1": test_f1}
        assert bootstrap[side] == report[side]["conlleval_f1"]
    assert report["metric"] == "conlleval_f1"  # NER's headline figure, by default
    assert report["unit"] == "sentence" and bootstrap["units"] == 20
    assert bootstrap["difference"] == pytest.approx(bootstrap["b"] - bootstrap["a"])
    assert bootstrap["low"] <= bootstrap["difference"] <= bootstrap["high"]
    assert 0 <= bootstrap["p_value"] <= 1 and bootstrap["samples"] == 300
    wrong = elmo_exp("compare", str(short), str(run_dir), "--metric", "srl_f1")
    assert wrong.returncode == 1
    assert "--metric srl_f1: Conlleval reports conlleval_precision" in wrong.stderr


def test_score_missing_file_is_one_line():
    result = elmo_exp("score", "ner", "no/such/file.txt")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: no/such/file.txt: no such file"


def test_validate_ok():
    result = elmo_exp("validate", "experiments/ner_baseline.jsonnet")
    assert result.returncode == 0, result.stderr
    assert "ok (model crf_tagger" in result.stdout


@pytest.mark.parametrize("task", ["squad", "srl"])
def test_predict_and_evaluate_write_the_same_official_file(task, tmp_path, trained_run):
    run = trained_run(f"{task}_baseline")
    dev = {"squad": "reproduction/squad/sample/dev.json",
           "srl": "reproduction/srl/sample/dev.txt"}[task]
    from elmo_experiments.errors import ConfigError
    from elmo_experiments.predict import evaluate_file, predict_lines

    predicted, evaluated = tmp_path / "predicted", tmp_path / "evaluated"
    list(predict_lines(run, str(ROOT / dev), official_path=str(predicted)))  # in this process:
    evaluate_file(run, ROOT / dev, official_path=str(evaluated))  # the command line's flags
    assert predicted.read_bytes() == evaluated.read_bytes() and predicted.stat().st_size > 0
    # are checked on NER (test_evaluate_matches_training_test_metrics_and_conlleval)

    with pytest.raises(ConfigError, match="text input has no official format"):
        list(predict_lines(run, dev, input_format_name="text", official_path=str(predicted)))
