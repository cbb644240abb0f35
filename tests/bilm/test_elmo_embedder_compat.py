"""``ElmoEmbedder`` (AllenNLP 0.9's API): its layers are ``elmo-exp embed``'s, their average is
``Elmo``'s output with equal layer weights, and its methods keep AllenNLP's shapes and files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import torch

from elmo_experiments import Elmo, ElmoEmbedder, batch_to_ids
from elmo_experiments.bilm.embed import embed_file
from elmo_experiments.errors import DataError

SENTENCES = [["The", "cat", "sat", "."], ["A", "dog", "."], ["Long", "sentences", "go", "on",
                                                          "and", "on", "."]]


@pytest.fixture(scope="module")
def embedder(tiny_bilm_dir: Path) -> ElmoEmbedder:
    return ElmoEmbedder(str(tiny_bilm_dir / "options.json"), str(tiny_bilm_dir / "weights.hdf5"))


def test_shapes_and_the_three_ways_agree(embedder: ElmoEmbedder) -> None:
    one = embedder.embed_sentence(SENTENCES[0])
    assert one.shape == (3, 4, 8) and one.dtype == np.float32
    batch = embedder.embed_batch(SENTENCES)
    assert [b.shape for b in batch] == [(3, 4, 8), (3, 3, 8), (3, 7, 8)]
    streamed = list(embedder.embed_sentences(iter(SENTENCES), batch_size=2))
    for a, b in zip(batch, streamed, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)  # stateless: batching changes nothing
    np.testing.assert_allclose(one, batch[0], atol=1e-6)
    assert embedder.embed_batch([[]])[0].shape == (3, 0, 8)
    assert [b.shape for b in embedder.embed_batch([[], ["x"]])] == [(3, 0, 8), (3, 1, 8)]


def test_a_directory_or_a_name_loads_too(tiny_bilm_dir: Path, embedder: ElmoEmbedder) -> None:
    np.testing.assert_allclose(ElmoEmbedder(str(tiny_bilm_dir)).embed_sentence(["a", "b"]),
                               embedder.embed_sentence(["a", "b"]), atol=1e-6)
    np.testing.assert_allclose(
        ElmoEmbedder(weights=str(tiny_bilm_dir)).embed_sentence(["a", "b"]),
        embedder.embed_sentence(["a", "b"]), atol=1e-6)


def test_the_average_is_Elmos_output_with_equal_weights(tiny_bilm_dir: Path,
                                                         embedder: ElmoEmbedder) -> None:
    elmo = Elmo(weights=str(tiny_bilm_dir), dropout=0.0).eval()
    with torch.no_grad():
        mixed = elmo(batch_to_ids(SENTENCES))["elmo_representations"][0]
    for row, layers in enumerate(embedder.embed_batch(SENTENCES)):
        np.testing.assert_allclose(mixed[row, : layers.shape[1]].numpy(),
                                   layers.mean(axis=0), atol=1e-5)


def test_embed_file_writes_what_elmo_exp_embed_writes(tiny_bilm_dir: Path, tmp_path: Path,
                                                       embedder: ElmoEmbedder) -> None:
    text = tmp_path / "in.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in SENTENCES), encoding="utf-8")
    embed_file(text, tmp_path / "ref.hdf5", str(tiny_bilm_dir), progress=False)
    with open(text, encoding="utf-8") as handle:  # an open file, as AllenNLP takes
        embedder.embed_file(handle, tmp_path / "all.hdf5", batch_size=2)
    embedder.embed_file(text, tmp_path / "top.hdf5", output_format="top")
    embedder.embed_file(text, tmp_path / "keys.hdf5", output_format="average",
                        use_sentence_keys=True)
    with h5py.File(tmp_path / "ref.hdf5") as ref, h5py.File(tmp_path / "all.hdf5") as out, \
            h5py.File(tmp_path / "top.hdf5") as top, h5py.File(tmp_path / "keys.hdf5") as keys:
        assert json.loads(out["sentence_to_index"][0]) == json.loads(ref["sentence_to_index"][0])
        for i, sentence in enumerate(SENTENCES):
            np.testing.assert_allclose(out[str(i)][()], ref[str(i)][()], atol=1e-6)
            np.testing.assert_allclose(top[str(i)][()], ref[str(i)][()][-1], atol=1e-6)
            np.testing.assert_allclose(keys[" ".join(sentence)][()],
                                       ref[str(i)][()].mean(axis=0), atol=1e-6)
        assert "sentence_to_index" not in keys


def test_embed_file_refuses_blank_lines_and_bad_formats(embedder: ElmoEmbedder,
                                                        tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    text.write_text("a b\n\nc\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"empty lines at indexes \[1\]"):
        embedder.embed_file(text, tmp_path / "out.hdf5")
    with pytest.raises(DataError, match="output_format"):
        embedder.embed_file(text, tmp_path / "out.hdf5", output_format="mean")
    assert not (tmp_path / "out.hdf5").exists()


def test_a_string_or_a_token_that_is_not_a_string_is_refused_in_one_line(
        embedder: ElmoEmbedder) -> None:
    """AllenNLP embedded "hello world" as 11 one-character tokens; here it is an error that
    says to pass tokens, as is a token that is not a string (naming sentence and position)."""
    from elmo_experiments.errors import DataError

    with pytest.raises(DataError) as info:
        embedder.embed_sentence("hello world")  # type: ignore[arg-type]
    assert str(info.value) == ("sentence 0: a string ('hello world'), not a list of tokens; "
                               "split it into tokens first, e.g. 'hello world'.split(), or use "
                               "elmo_experiments.data.tokenizers.tokenize")
    with pytest.raises(DataError, match=r"^sentence 1, token 2: 5 is a int, not a string$"):
        embedder.embed_batch([["a"], ["b", "c", 5]])  # type: ignore[list-item]
    with pytest.raises(DataError, match=r"^expected sentences \(lists of tokens\), got a string"):
        embedder.embed_batch("hello")  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"^sentence 0: a NoneType, not a list of tokens$"):
        list(embedder.embed_sentences([None]))  # type: ignore[list-item]
    assert embedder.embed_sentence(("hello", "world")).shape[1] == 2  # a tuple is fine


def test_a_file_that_is_not_utf8_is_named_in_one_line(embedder: ElmoEmbedder,
                                                      tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    text.write_bytes(b"a b\n\xff c\n")
    with pytest.raises(DataError) as info:
        embedder.embed_file(text, tmp_path / "out.hdf5")
    assert str(info.value) == f"{text}:2: not UTF-8 text (byte 0xff at column 1)"
    with pytest.raises(DataError) as info:
        embedder.embed_file(open(text, encoding="utf-8"), tmp_path / "out.hdf5")  # noqa: SIM115
    assert str(info.value) == (f"{text}: not utf-8 text, at line 1 or after it "
                               f"(invalid start byte)")
    assert not (tmp_path / "out.hdf5").exists()


@pytest.mark.parametrize("line, why", [
    ("a/b", "HDF5 reads '/' in a name as a path through groups"),
    (".", "HDF5 reads '.' as the file's root group"),
    ("a\0b", "HDF5 ends a name at a NUL character"),
])
def test_a_sentence_hdf5_cannot_name_is_refused_as_a_key_in_one_line(
        embedder: ElmoEmbedder, tmp_path: Path, line: str, why: str) -> None:
    """``a`` then ``a/b`` was an h5py TypeError, ``.`` a false repeat, ``a<NUL>b`` the key
    ``a``: keys are the sentences as they are (as AllenNLP's), or a refusal naming the line."""
    text = tmp_path / "in.txt"
    text.write_text(f"a\n{line}\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        embedder.embed_file(text, tmp_path / "out.hdf5", use_sentence_keys=True)
    assert str(info.value) == (f"sentence 1 ({line!r}) cannot be a key: {why}; without "
                               f"use_sentence_keys any sentence can be embedded")
    assert not (tmp_path / "out.hdf5").exists()
    embedder.embed_file(text, tmp_path / "out.hdf5")  # by index: fine
    with h5py.File(tmp_path / "out.hdf5") as out:
        assert json.loads(out["sentence_to_index"][0]) == {"a": "0", line: "1"}


def test_sentence_keys_keep_other_punctuation_and_refuse_repeats(
        embedder: ElmoEmbedder, tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    lines = ["a", "..", "a:b", "$ \\ ?"]
    text.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    embedder.embed_file(text, tmp_path / "out.hdf5", output_format="top",
                        use_sentence_keys=True)
    with h5py.File(tmp_path / "out.hdf5") as out:
        assert sorted(out) == sorted(lines)
        for line in lines:
            np.testing.assert_allclose(out[line][()],
                                       embedder.embed_sentence(line.split())[-1], atol=1e-6)
    text.write_text("a\nb\na\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"^sentence 2 repeats an earlier one: without "
                                        r"use_sentence_keys duplicates can be embedded$"):
        embedder.embed_file(text, tmp_path / "again.hdf5", use_sentence_keys=True)


def test_lines_may_end_in_a_lone_carriage_return(embedder: ElmoEmbedder,
                                                 tmp_path: Path) -> None:
    (tmp_path / "cr.txt").write_bytes(b"The cat sat .\rA dog .\r")
    (tmp_path / "lf.txt").write_bytes(b"The cat sat .\nA dog .\n")
    embedder.embed_file(tmp_path / "cr.txt", tmp_path / "cr.hdf5")
    embedder.embed_file(tmp_path / "lf.txt", tmp_path / "lf.hdf5")
    with h5py.File(tmp_path / "cr.hdf5") as cr, h5py.File(tmp_path / "lf.hdf5") as lf:
        assert sorted(cr) == sorted(lf) == ["0", "1", "sentence_to_index"]
        for name in cr:
            np.testing.assert_array_equal(cr[name][()], lf[name][()])


@pytest.mark.parametrize("batch", [None, 5])
def test_a_batch_that_is_not_sentences_is_refused_in_one_line(embedder: ElmoEmbedder,
                                                               batch: object) -> None:
    kind = type(batch).__name__
    with pytest.raises(DataError) as info:
        embedder.embed_batch(batch)  # type: ignore[arg-type]
    assert str(info.value) == f"expected sentences (lists of tokens), got a {kind}"
    with pytest.raises(DataError) as info:
        list(embedder.embed_sentences(batch))  # type: ignore[arg-type]
    assert str(info.value) == f"expected sentences (lists of tokens), got a {kind}"


@pytest.mark.parametrize("batch_size", ["2", None, 2.5, 0, True])
def test_a_batch_size_that_is_not_a_positive_whole_number_is_one_line(
        embedder: ElmoEmbedder, tmp_path: Path, batch_size: object) -> None:
    message = f"^batch_size must be a whole number, at least 1, got {re.escape(repr(batch_size))}$"
    wrong: Any = batch_size
    with pytest.raises(DataError, match=message):
        list(embedder.embed_sentences(SENTENCES, batch_size=wrong))
    text = tmp_path / "in.txt"
    text.write_text("a b\n", encoding="utf-8")
    with pytest.raises(DataError, match=message):
        embedder.embed_file(text, tmp_path / "out.hdf5", batch_size=wrong)
    assert len(list(embedder.embed_sentences(SENTENCES, batch_size=np.int64(2)))) == 3


@pytest.mark.parametrize("gpus, cuda_device, message", [
    (0, 3, "cuda_device 3: no CUDA device is available here; -1 is the CPU"),
    (1, 3, "cuda_device 3: this machine has 1 CUDA device (0 to 0); -1 is the CPU"),
    (0, "0", "cuda_device must be a whole number (-1: the CPU), got '0'"),
])
def test_a_cuda_device_this_machine_lacks_is_one_line(
        tiny_bilm_dir: Path, monkeypatch: pytest.MonkeyPatch, gpus: int, cuda_device: object,
        message: str) -> None:
    """Once ``AssertionError: Torch not compiled with CUDA enabled``."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    with pytest.raises(DataError) as info:
        ElmoEmbedder(str(tiny_bilm_dir), cuda_device=cuda_device)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_embed_file_refuses_its_input_as_output_and_what_is_no_file(
        tiny_bilm_dir: Path, tmp_path: Path) -> None:
    from elmo_experiments.errors import DataError

    text = tmp_path / "same.txt"
    text.write_text("a b\n", encoding="utf-8")
    embedder = ElmoEmbedder(str(tiny_bilm_dir))
    with pytest.raises(DataError, match=r"same.txt: the input itself; write the vectors to "
                                        r"another file$"):
        embedder.embed_file(str(text), str(text))
    assert text.read_text(encoding="utf-8") == "a b\n"
    with pytest.raises(DataError, match=r"^input_file must be a path or an open text file, "
                                        r"got None$"):
        embedder.embed_file(None, str(tmp_path / "out.hdf5"))  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"^output_file_path must be a file's path, got None$"):
        embedder.embed_file(str(text), None)  # type: ignore[arg-type]
    for output in ("", str(tmp_path)):  # "" is no path ("." exists), a folder no file
        with pytest.raises(DataError, match=rf"^output_file_path must be a file's path, got "
                                            rf"{re.escape(repr(output))}$"):
            embedder.embed_file(str(text), output)
    with pytest.raises(DataError, match=r"absent.txt: no such data file"):
        embedder.embed_file(str(tmp_path / "absent.txt"), str(tmp_path / "out.hdf5"))
    handle = open(text, encoding="utf-8")  # noqa: SIM115
    handle.close()
    with pytest.raises(DataError, match=r"same.txt: the file is closed; pass it open, or pass "
                                        r"its path$"):
        embedder.embed_file(handle, str(tmp_path / "out.hdf5"))
    assert not (tmp_path / "out.hdf5").exists()
