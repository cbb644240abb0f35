"""``reproduction/coref/memory.py``: the README's peak-memory table is the committed results file's,
and the command's helpers (the largest instance, the candidate span count, the missing-data
error). Needs no data."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest
import torch
from task_scripts import load_script

from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.modules.spans import enumerate_spans

TASK = PROJECT_ROOT / "reproduction" / "coref"
README = TASK / "README.md"
RESULTS = TASK / "results" / "memory.json"
STEPS = {"training step": "train", "evaluation forward": "evaluate"}


def _load() -> ModuleType:
    return load_script(TASK / "memory.py", "coref_memory")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _table_rows() -> list[list[str]]:
    lines = README.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines)
                  if line.startswith("| configuration | step | document |"))
    rows = []
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_readme_table_matches_results() -> None:
    entries = json.loads(RESULTS.read_text(encoding="utf-8"))
    entry = next(e for e in entries if e["config"] == "experiments/coref_baseline.jsonnet"
                 and e["ELMO_SIZE"] == "cpu")
    rows = _table_rows()
    assert len(rows) == len(STEPS)
    for row in rows:
        assert row[0] == "baseline, `ELMO_SIZE=cpu`"
        kind = next(k for prefix, k in STEPS.items() if row[1].startswith(prefix))
        step = entry[kind]
        document = re.search(r"`([^`]+)`", row[2])
        assert document is not None and step["document"].startswith(document.group(1))
        if "window" in step["document"]:
            window = re.search(r"window \d+ of \d+", row[2])
            assert window is not None and window.group(0) in step["document"]
        figures = [_number(cell) for cell in row[3:]]
        assert figures == [step["tokens"], step["sentences"], step["candidate_spans"],
                           step["kept_spans"], step["peak_mib"], step["step_increase_mib"],
                           step["seconds"]]


def test_largest_instance() -> None:
    memory = _load()
    instances = [{"document": [["a", "b"], ["c"]]}, {"document": [["a"] * 4]},
                 {"document": [["a", "b"], ["c", "d"]]}]
    assert memory.largest(instances) == 1  # 4 tokens; the first of the two with 4
    assert memory.largest(instances[2:]) == 0
    with pytest.raises(ValueError):
        memory.largest([])


@pytest.mark.parametrize("lengths", [[1], [3, 12], [10, 11, 2, 1], [25]])
def test_candidate_spans_is_what_the_model_enumerates(lengths: list[int]) -> None:
    memory = _load()
    sentence_ids = torch.repeat_interleave(torch.arange(len(lengths)),
                                           torch.tensor(lengths))[None]
    _, mask = enumerate_spans(sentence_ids, torch.tensor([sum(lengths)]), 10)
    assert memory.candidate_spans(lengths, 10) == int(mask.sum())


def test_missing_litbank_is_a_one_line_error(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _load()
    monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as error:
        memory.main(["--out", str(tmp_path / "memory.json")])
    message = str(error.value)
    assert "\n" not in message and "coref_litbank/conll" in message
    assert not (tmp_path / "memory.json").exists()
    monkeypatch.delenv("ELMO_DATA_DIR")
    assert "ELMO_DATA_DIR is not set" in memory.litbank_problem()
    (tmp_path / "coref_litbank" / "conll").mkdir(parents=True)
    (tmp_path / "coref_litbank" / "conll" / "x.conll").write_text("")
    monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path))
    assert memory.litbank_problem() is None
