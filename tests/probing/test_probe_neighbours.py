"""Table 4's nearest neighbours: ranking, SemCor occurrences, static vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from probe_samples import write_semcor

from elmo_experiments.cli import cli
from elmo_experiments.errors import DataError
from elmo_experiments.probing.neighbours import (
    format_neighbours,
    nearest_in_context,
    nearest_static,
    occurrences,
    rank,
    read_static_vectors,
)
from elmo_experiments.probing.semcor import read_semcor

GLOVE = "play 1 0 0\nplaying 0.9 0.1 0\ngame 0.7 0.7 0\nstage 0 1 0\nPlay 1 0 0.1\n"


def test_rank_by_cosine() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.1], [-1.0, 0.0]])
    ranked = rank(np.array([1.0, 0.0]), vectors, 3)
    assert [i for i, _ in ranked] == [0, 2, 1]
    assert ranked[0][1] == pytest.approx(1.0)


def test_static_neighbours(tmp_path: Path) -> None:
    path = tmp_path / "vectors.txt"
    path.write_text(GLOVE, encoding="utf-8")
    words, vectors = read_static_vectors(path)
    assert vectors.shape == (5, 3)
    assert [w for w, _ in nearest_static("play", words, vectors, k=2)] == ["Play", "playing"]
    with pytest.raises(DataError):
        nearest_static("absent", words, vectors)


def test_nearest_in_context(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    corpus = read_semcor(write_semcor(tmp_path / "semcor.tar.gz"))
    assert occurrences(corpus, "play") == [(1, 0), (2, 1), (2, 2)]
    found = nearest_in_context(str(tiny_bilm_dir), "play", ["the", "play", "ended"], corpus, k=2)
    assert len(found) == 2
    assert found[0].cosine >= found[1].cosine
    assert all("[[play]]" in n.marked() for n in found)
    text = format_neighbours("play", ["the", "play", "ended"], found, [("game", 0.5)])
    assert "query: the [[play]] ended" in text and "game (0.500)" in text
    with pytest.raises(DataError):
        nearest_in_context(str(tiny_bilm_dir), "play", ["no", "word"], corpus)


def test_neighbours_command(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    write_semcor(tmp_path / "wsd" / "semcor3.0.tar.gz")
    vectors = tmp_path / "vectors.txt"
    vectors.write_text(GLOVE, encoding="utf-8")
    result = CliRunner().invoke(cli, ["neighbours", "play", "--sentence", "a play", "--weights",
                                      str(tiny_bilm_dir), "--vectors", str(vectors), "-k", "2",
                                      "--data-root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "nearest SemCor occurrences" in result.output and "playing" in result.output
