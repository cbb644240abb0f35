"""``elmo-exp vectors``: word2vec skip-gram vectors in GloVe's format, read by ``embedding``."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("gensim", reason="gensim is not installed (pip install -e '.[vectors]')")

from elmo_experiments.analysis.static_vectors import portable_kernels, train_vectors
from elmo_experiments.data.files import sha1_of
from elmo_experiments.errors import DataError, ElmoError, WriteError
from elmo_experiments.modules.embedders.word_embedding import read_pretrained
from elmo_experiments.precision import cpu_flags

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "reproduction" / "bilm" / "sample" / "train.txt"
SETTINGS = {"dim": 8, "fmt": "tokenized", "workers": 1, "seed": 3, "epochs": 2}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("vectors") / "sample.txt"
    return out, train_vectors(str(SAMPLE), str(out), **SETTINGS)


def test_two_runs_give_identical_files(trained, tmp_path):
    out, _ = trained
    again = tmp_path / "again.txt"
    train_vectors(str(SAMPLE), str(again), **SETTINGS)
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "other_seed.txt"
    train_vectors(str(SAMPLE), str(other), **{**SETTINGS, "seed": 4})
    assert other.read_bytes() != out.read_bytes()


def test_vectors_load_through_the_word_embedder(trained):
    out, summary = trained
    lines = out.read_text(encoding="utf-8").splitlines()
    words = [line.split(" ")[0] for line in lines]
    assert len(words) == len(set(words)) == summary["vocabulary_size"] > 50
    vectors = read_pretrained(str(out), 8, set(words) | {"not-a-word"})
    assert set(vectors) == set(words)
    assert all(len(v) == 8 for v in vectors.values())
    with pytest.raises(DataError, match="expected a word and 9 values, found 8"):
        read_pretrained(str(out), 9, set(words))


def test_sidecar_records_settings_corpus_and_wall_time(trained):
    out, summary = trained
    sidecar = json.loads(Path(f"{out}.json").read_text())
    assert sidecar == summary
    assert sidecar["settings"]["dim"] == 8 and sidecar["settings"]["seed"] == 3
    assert sidecar["corpus"]["sha1"] == sha1_of(SAMPLE)
    assert sidecar["corpus"]["bytes"] == SAMPLE.stat().st_size
    assert sidecar["corpus"]["sentences"] == 600
    assert sidecar["wall_time_s"] > 0 and sidecar["gensim_version"]
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")], "temporaries left"


def test_raw_gzipped_text_is_tokenised_as_in_pretraining(tmp_path):
    corpus = tmp_path / "books"
    corpus.mkdir()
    text = "The cat sat on the mat. The dog sat too.\n\nThe cat ran, the dog sat.\n" * 5
    with gzip.open(corpus / "a.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(text)
    out = tmp_path / "raw.txt"
    summary = train_vectors(str(corpus), str(out), dim=4, fmt="raw", min_count=1, workers=1)
    words = {line.split(" ")[0] for line in out.read_text().splitlines()}
    assert {"The", "cat", ".", ","} <= words  # spaCy's tokens, case kept
    assert summary["corpus"]["sentences"] == 15


def test_empty_corpus_is_a_one_line_data_error(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    with pytest.raises(DataError, match="no sentences") as error:
        train_vectors(str(empty), str(tmp_path / "out.txt"), dim=8, fmt="tokenized")
    assert "\n" not in str(error.value)
    with pytest.raises(DataError, match="lower --min-count"):
        train_vectors(str(SAMPLE), str(tmp_path / "out.txt"), dim=8, fmt="tokenized",
                      min_count=10**6)
    assert not (tmp_path / "out.txt").exists()
    assert not list(tmp_path.glob(".vectors-*"))


def test_command_line_error_is_one_line(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "elmo_experiments", "vectors", str(empty),
         str(tmp_path / "out.txt"), "--format", "tokenized"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "no sentences" in result.stderr


def test_the_portable_kernels_are_asked_for_where_the_cpu_runs_them():
    assert portable_kernels(frozenset({"sse2", "avx2", "fma", "avx512f"}), {}) == "Haswell"
    assert portable_kernels(frozenset({"sse2", "avx"}), {}) is None  # no AVX2: OpenBLAS's choice
    assert portable_kernels(None, {}) is None  # flags unknown (not Linux)
    assert portable_kernels(frozenset({"avx2", "fma"}), {"OPENBLAS_CORETYPE": "Zen"}) == "Zen"


@pytest.mark.skipif(not {"avx2", "fma"} <= (cpu_flags() or frozenset()),
                    reason="the CPU has no AVX2 and FMA: OpenBLAS picks its own kernels")
def test_the_command_trains_with_the_portable_kernels_and_records_them(tmp_path):
    pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    out = tmp_path / "out.txt"
    result = subprocess.run(
        [sys.executable, "-m", "elmo_experiments", "vectors", str(SAMPLE), str(out),
         "--format", "tokenized", "--dim", "8", "--epochs", "1", "--workers", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(Path(f"{out}.json").read_text())["blas_kernels"] == "Haswell"


def test_missing_gensim_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gensim", None)  # import gensim now raises ImportError
    with pytest.raises(ElmoError, match=r"needs gensim: pip install"):
        train_vectors(str(SAMPLE), str(tmp_path / "out.txt"), dim=8, fmt="tokenized")


def test_exclude_cuts_documents_out_as_pretraining_does(tmp_path):
    novel = tmp_path / "novel.txt"
    novel.write_text("The cat sat on the mat.\n\n" * 3 + "A zebra grazed quietly.\n\n"
                     + "The dog sat.\n" * 3)
    excerpt = tmp_path / "excerpt.conll"
    words = ["A", "zebra", "grazed", "quietly", "."]
    excerpt.write_text("\n".join(["#begin document (x); part 0",
                                  *[f"x\t0\t{i}\t{w}\t_" for i, w in enumerate(words)],
                                  "", "#end document", ""]))
    out = tmp_path / "cut.txt"
    summary = train_vectors(str(novel), str(out), dim=4, min_count=1, workers=1,
                            exclude=str(excerpt))
    vocabulary = {line.split(" ")[0] for line in out.read_text().splitlines()}
    assert "cat" in vocabulary and "zebra" not in vocabulary
    assert summary["corpus"]["exclude"] == str(excerpt)
    assert summary["corpus"]["excluded"][str(novel)]["documents"] == 1


def test_a_corpus_file_with_glob_characters_in_its_name_is_read_as_named(tmp_path):
    """``corpus[1].txt`` was read as a glob: ``no corpus files found``."""
    corpus = tmp_path / "corpus[1].txt"
    corpus.write_bytes(SAMPLE.read_bytes())
    summary = train_vectors(str(corpus), str(tmp_path / "out.txt"), **{**SETTINGS, "epochs": 1})
    assert summary["corpus"]["files"] == 1 and summary["corpus"]["sentences"] == 600


def test_a_full_disk_while_tokenising_names_the_output(tmp_path, monkeypatch):
    """It was ``error: [Errno 28] No space left on device``, naming no file. The tokenised
    copy of the corpus goes to /dev/full here, which refuses every write as a full disk does."""
    import tempfile

    import elmo_experiments.analysis.static_vectors as module

    class FullDisk(tempfile.TemporaryDirectory):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            os.symlink("/dev/full", Path(self.name) / "sentences.txt")

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    monkeypatch.setattr(module.tempfile, "TemporaryDirectory", FullDisk)
    out = tmp_path / "vec.txt"
    with pytest.raises(WriteError) as info:
        train_vectors(str(SAMPLE), str(out), **SETTINGS)
    assert str(info.value) == (f"{out}: cannot write it: the disk is full (No space left on "
                               f"device); an earlier version of it, if any, is intact (writing "
                               f"the tokenised corpus to a temporary file beside it)")
    assert not out.exists() and not list(tmp_path.glob(".vectors-*"))
