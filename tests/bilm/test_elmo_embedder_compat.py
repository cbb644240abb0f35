"""``ElmoEmbedder`` (AllenNLP 0.9's API): its layers are ``elmo-exp embed``'s, their average is
``Elmo``'s output with equal layer weights, and its methods keep AllenNLP's shapes and files."""

from __future__ import annotations

import json
from pathlib import Path

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
