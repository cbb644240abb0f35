"""Word embeddings (pretrained text files), the character CNN, and the embedder stack."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest
import torch

from elmo_experiments.config.validate import Validator
from elmo_experiments.contracts import regularization_penalty
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError
from elmo_experiments.modules.embedders.char_cnn import CharacterCnn
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.embedders.word_embedding import WordEmbedding, read_pretrained

GLOVE = "zib 0.1 0.2 0.3\nZab 1 2 3\nqux -1.5 0 2.5e-1\nunused 9 9 9\n"


def token_vocab(words: list[str]) -> Vocabulary:
    vocab = Vocabulary()
    for word in words:
        vocab.add("tokens", word)
    return vocab


# ----------------------------------------------------------------- read_pretrained


def test_read_glove_keeps_only_wanted_words(tmp_path: Path) -> None:
    path = tmp_path / "vectors.txt"
    path.write_text(GLOVE, encoding="utf-8")
    found = read_pretrained(str(path), 3, {"zib", "qux", "absent"})
    assert found == {"zib": [0.1, 0.2, 0.3], "qux": [-1.5, 0.0, 0.25]}


def test_read_word2vec_text_with_header_and_gz_fallback(tmp_path: Path) -> None:
    path = tmp_path / "w2v.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("4 3\n" + GLOVE.replace("\n", " \n"))  # trailing spaces, as word2vec writes
    found = read_pretrained(str(tmp_path / "w2v.txt"), 3, {"Zab", "unused"})
    assert found == {"Zab": [1.0, 2.0, 3.0], "unused": [9.0, 9.0, 9.0]}


def test_word2vec_header_with_the_wrong_dimension(tmp_path: Path) -> None:
    path = tmp_path / "w2v.txt"
    path.write_text("4 5\n" + GLOVE, encoding="utf-8")
    with pytest.raises(DataError, match=r"w2v\.txt:1: vectors have 5 dims, config says 3"):
        read_pretrained(str(path), 3, {"zib"})


def test_dimension_mismatch_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "glove.txt"
    path.write_text("zib 1 2 3\nzab 1 2\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        read_pretrained(str(path), 3, {"zib"})
    message = str(info.value)
    assert f"{path}:2: expected a word and 3 values, found 2" in message
    assert "\n" not in message


def test_dimension_mismatch_in_a_gz_file(tmp_path: Path) -> None:
    path = tmp_path / "glove.txt.gz"
    path.write_bytes(gzip.compress(b"zib 1 2 3 4\n"))
    with pytest.raises(DataError, match=r"glove\.txt\.gz:1: expected a word and 3 values"):
        read_pretrained(str(path), 3, set())


def test_non_numeric_value(tmp_path: Path) -> None:
    path = tmp_path / "glove.txt"
    path.write_text("zib 1 2 3\nzab 1 two 3\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"glove\.txt:2: non-numeric vector value"):
        read_pretrained(str(path), 3, {"zab"})


def test_bad_utf8_in_a_vector_file_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "glove.txt"
    path.write_bytes(b"zib 1 2 3\nz\xe9b 1 2 3\n")
    with pytest.raises(DataError, match=r"glove\.txt:2: not UTF-8"):
        read_pretrained(str(path), 3, {"zib"})


def test_missing_vector_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such data file"):
        read_pretrained(str(tmp_path / "none.txt"), 3, set())


# ----------------------------------------------------------------- WordEmbedding


def test_random_embedding_has_a_zero_padding_row() -> None:
    torch.manual_seed(0)
    embedding = WordEmbedding(token_vocab(["a", "b"]), 6)
    assert embedding.weight.shape == (4, 6)
    assert embedding.output_dim == 6
    assert embedding.weight[0].eq(0).all()
    assert embedding.weight[1:].abs().sum(dim=1).gt(0).all()
    out = embedding(torch.tensor([[2, 3, 0], [1, 0, 0]]))
    assert out.shape == (2, 3, 6)
    assert out[0, 2].eq(0).all() and out[1, 1:].eq(0).all()
    assert torch.equal(out[0, 0], embedding.weight[2])


def test_pretrained_rows_are_copied_with_lowercase_fallback(tmp_path: Path) -> None:
    path = tmp_path / "vectors.txt"
    path.write_text(GLOVE, encoding="utf-8")
    vocab = token_vocab(["zib", "Zab", "QUX", "zab", "nothing"])
    torch.manual_seed(0)
    embedding = WordEmbedding(vocab, 3, pretrained_file=str(path))
    weight = embedding.weight.detach()

    def row(word: str) -> list[float]:
        return weight[vocab.index("tokens", word)].tolist()

    assert row("zib") == pytest.approx([0.1, 0.2, 0.3])
    assert row("Zab") == pytest.approx([1.0, 2.0, 3.0])  # exact match
    assert row("QUX") == pytest.approx([-1.5, 0.0, 0.25])  # lowercase fallback
    assert row("zab") != pytest.approx([1.0, 2.0, 3.0])  # no fallback upwards
    assert weight[0].eq(0).all()
    assert torch.isfinite(weight).all()


def test_trainable_flag() -> None:
    vocab = token_vocab(["a"])
    assert WordEmbedding(vocab, 4).weight.requires_grad
    frozen = WordEmbedding(vocab, 4, trainable=False)
    assert not frozen.weight.requires_grad
    assert not [p for p in frozen.parameters() if p.requires_grad]


def test_padding_row_gets_no_gradient() -> None:
    embedding = WordEmbedding(token_vocab(["a", "b"]), 4)
    embedding(torch.tensor([[2, 3, 0, 0]])).sum().backward()
    assert embedding.weight.grad[0].eq(0).all()
    assert embedding.weight.grad[2].ne(0).all()


def test_embedding_from_the_registry_uses_the_vocab_context() -> None:
    validator = Validator()
    spec = validator.component({"type": "embedding", "embedding_dim": 5, "trainable": False},
                               "token_embedder", "token_embedder")
    assert validator.problems == []
    embedding = spec.build(vocab=token_vocab(["a", "b", "c"]))
    assert embedding.weight.shape == (5, 5)
    assert not embedding.weight.requires_grad


# ----------------------------------------------------------------- CharacterCnn


def char_vocab(size: int) -> Vocabulary:
    return Vocabulary.from_counts({"token_characters": Counter({chr(97 + i): 1
                                                                for i in range(size)})})


def brute_force(cnn: CharacterCnn, chars: torch.Tensor) -> torch.Tensor:
    """Per word: embed its real characters, pad up to the filter width, convolve, max, relu."""
    batch, seq, _ = chars.shape
    out = torch.zeros(batch, seq, cnn.output_dim)
    for b in range(batch):
        for s in range(seq):
            ids = [int(c) for c in chars[b, s] if c != 0]
            if not ids:
                continue
            embedded = cnn.embedding.weight[ids]  # (length, emb)
            parts = []
            for width, conv in zip(cnn.widths, cnn.convolutions, strict=True):
                x = embedded
                if len(ids) < width:
                    x = torch.cat([x, torch.zeros(width - len(ids), x.shape[1])])
                columns = []
                for start in range(x.shape[0] - width + 1):
                    window = x[start:start + width]  # (width, emb)
                    # conv weight: (filters, emb, width)
                    columns.append((conv.weight * window.T[None]).sum(dim=(1, 2)) + conv.bias)
                parts.append(torch.stack(columns).max(dim=0).values)
            out[b, s] = torch.relu(torch.cat(parts))
    return out


def random_chars(batch: int, seq: int, word_len: int, vocab_size: int,
                 generator: torch.Generator) -> torch.Tensor:
    chars = torch.zeros(batch, seq, word_len, dtype=torch.long)
    for b in range(batch):
        tokens = int(torch.randint(0, seq + 1, (1,), generator=generator))
        for s in range(tokens):
            length = int(torch.randint(1, word_len + 1, (1,), generator=generator))
            chars[b, s, :length] = torch.randint(1, vocab_size, (length,), generator=generator)
    return chars


@pytest.mark.parametrize("widths", [[3], [2, 4], [1, 3, 5]])
def test_char_cnn_matches_a_per_word_loop(widths: list[int]) -> None:
    torch.manual_seed(0)
    vocab = char_vocab(10)
    cnn = CharacterCnn(vocab, embedding_dim=4, num_filters=5, ngram_filter_sizes=widths).eval()
    generator = torch.Generator().manual_seed(1)
    chars = random_chars(3, 5, 6, vocab.size("token_characters"), generator)
    chars[0, 0] = torch.tensor([2, 3, 4, 5, 6, 7])  # at least one full-width word
    chars[0, 1] = torch.tensor([2, 0, 0, 0, 0, 0])  # a word shorter than every filter but 1
    with torch.no_grad():
        out = cnn(chars)
        expected = brute_force(cnn, chars)
    assert out.shape == (3, 5, 5 * len(widths))
    assert cnn.output_dim == 5 * len(widths)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)


def test_char_cnn_padded_tokens_are_zero_and_padding_is_ignored() -> None:
    torch.manual_seed(0)
    cnn = CharacterCnn(char_vocab(6), embedding_dim=3, num_filters=4, ngram_filter_sizes=[2])
    cnn.eval()
    chars = torch.tensor([[[2, 3, 4, 0], [5, 0, 0, 0], [0, 0, 0, 0]]])
    with torch.no_grad():
        out = cnn(chars)
        wider = cnn(torch.nn.functional.pad(chars, (0, 3)))  # more character padding
        alone = cnn(chars[:, :1, :3])
    assert out[0, 2].eq(0).all()
    torch.testing.assert_close(wider, out)
    torch.testing.assert_close(alone[0, 0], out[0, 0])


def test_char_cnn_words_shorter_than_the_filter_and_the_batch() -> None:
    torch.manual_seed(0)
    cnn = CharacterCnn(char_vocab(6), embedding_dim=3, num_filters=4, ngram_filter_sizes=[5])
    cnn.eval()
    chars = torch.tensor([[[2, 3], [4, 0]]])  # word_len 2 < filter width 5
    with torch.no_grad():
        out = cnn(chars)
    assert out.shape == (1, 2, 4)
    torch.testing.assert_close(out, brute_force(cnn, chars))
    assert torch.isfinite(out).all()


def test_char_cnn_all_padding_batch() -> None:
    cnn = CharacterCnn(char_vocab(4), embedding_dim=3, num_filters=4, ngram_filter_sizes=[3])
    out = cnn(torch.zeros(2, 3, 4, dtype=torch.long))
    assert out.shape == (2, 3, 4)
    assert out.eq(0).all()


def test_char_cnn_gradients_flow() -> None:
    torch.manual_seed(0)
    cnn = CharacterCnn(char_vocab(6), embedding_dim=3, num_filters=4, ngram_filter_sizes=[2])
    cnn(torch.tensor([[[2, 3, 4], [5, 6, 0]]])).sum().backward()
    assert cnn.convolutions[0].weight.grad is not None
    assert cnn.embedding.weight.grad[0].eq(0).all()


def test_char_cnn_from_the_registry() -> None:
    validator = Validator()
    spec = validator.component(
        {"type": "character_encoding", "num_filters": 7, "ngram_filter_sizes": [2, 3],
         "activation": "tanh"}, "token_embedder", "token_embedder")
    assert validator.problems == []
    cnn = spec.build(vocab=char_vocab(5))
    assert cnn.output_dim == 14
    assert cnn.activation is torch.tanh


# ----------------------------------------------------------------- EmbedderStack


class Constant(torch.nn.Module):
    def __init__(self, value: float, dim: int) -> None:
        super().__init__()
        self.value, self.output_dim = value, dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.full((*ids.shape[:2], self.output_dim), self.value)


def test_stack_concatenates_in_sorted_key_order() -> None:
    stack = EmbedderStack({"zeta": Constant(3.0, 1), "alpha": Constant(1.0, 2),
                           "mid": Constant(2.0, 3)})
    assert stack.keys == ["alpha", "mid", "zeta"]
    assert stack.output_dim == 6
    ids = torch.zeros(2, 4, dtype=torch.long)
    embedded = stack({"zeta": ids, "mid": ids, "alpha": ids})
    out = embedded.input
    assert out.shape == (2, 4, 6) and embedded.extra == []
    assert out[0, 0].tolist() == [1.0, 1.0, 2.0, 2.0, 2.0, 3.0]
    assert regularization_penalty(stack) is None


def test_stack_of_real_embedders() -> None:
    torch.manual_seed(0)
    words = WordEmbedding(token_vocab(["a", "b"]), 4)
    chars = CharacterCnn(char_vocab(5), embedding_dim=3, num_filters=6).eval()
    stack = EmbedderStack({"tokens": words, "token_characters": chars})
    ids = torch.tensor([[2, 3, 0]])
    char_ids = torch.tensor([[[2, 3, 0], [4, 0, 0], [0, 0, 0]]])
    out = stack({"tokens": ids, "token_characters": char_ids}).input
    assert out.shape == (1, 3, 10)
    torch.testing.assert_close(out[..., :6], chars(char_ids))  # "token_characters" < "tokens"
    torch.testing.assert_close(out[..., 6:], words(ids))
    single = EmbedderStack({"tokens": words})
    torch.testing.assert_close(single({"tokens": ids}).input, words(ids))


def test_the_penalty_sums_the_stacks_embedders_own_terms() -> None:
    class Penalised(Constant):
        def penalty(self) -> torch.Tensor:
            return torch.tensor(self.value)

    stack = EmbedderStack({"a": Penalised(0.5, 1), "b": Penalised(2.0, 1), "c": Constant(1, 1)})
    assert regularization_penalty(stack).item() == pytest.approx(2.5)


def test_each_call_returns_its_own_output_placements(tiny_bilm_dir) -> None:
    """Two text fields embedded one after the other each get their own ELMo at the output
    (values, not state left on the module): the premise's and the hypothesis's."""
    from elmo_experiments.bilm.characters import batch_to_ids
    from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder

    elmo = ElmoTokenEmbedder(str(tiny_bilm_dir), mixes=[{}, {"mode": "last"}],
                             dropout=0.0).eval()
    stack = EmbedderStack({"elmo": elmo})
    premise = stack({"elmo": batch_to_ids([["A", "dog", "runs", "."]])})
    hypothesis = stack({"elmo": batch_to_ids([["Cats", "sleep"]])})
    assert premise.extra[0].shape[1] == 4 and hypothesis.extra[0].shape[1] == 2
    again = stack({"elmo": batch_to_ids([["A", "dog", "runs", "."]])})
    torch.testing.assert_close(premise.extra[0], again.extra[0])


def test_elmo_and_the_character_cnn_take_a_document_of_sentences(tiny_bilm_dir) -> None:
    """(batch, sentences, tokens, chars) in, (batch, sentences, tokens, dim) out: each sentence
    is embedded as it would be alone; all-padding sentences come out zero."""
    from elmo_experiments.bilm.characters import batch_to_ids
    from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder

    sentences = [["A", "dog", "runs", "."], ["Cats", "sleep"], ["Yes"]]
    flat = batch_to_ids(sentences)  # (3, 4, 50)
    document = torch.zeros(2, 2, 4, 50, dtype=torch.long)  # 2 documents x 2 sentences
    document[0, 0], document[0, 1], document[1, 0] = flat[0], flat[1], flat[2]
    elmo = ElmoTokenEmbedder(str(tiny_bilm_dir), mixes=[{}, {"mode": "last"}],
                             dropout=0.0).eval()
    with torch.no_grad():
        alone = elmo(flat)
        together = elmo(document)
    assert together.input.shape == (2, 2, 4, elmo.output_dim)
    for (d, s), row in {(0, 0): 0, (0, 1): 1, (1, 0): 2}.items():
        torch.testing.assert_close(together.input[d, s], alone.input[row], atol=1e-6, rtol=0)
        torch.testing.assert_close(together.extra[0][d, s], alone.extra[0][row], atol=1e-6,
                                   rtol=0)
    assert not together.input[1, 1].any()
    chars = CharacterCnn(char_vocab(5), embedding_dim=3, num_filters=6).eval()
    char_ids = torch.tensor([[[2, 3, 0], [4, 0, 0]], [[5, 2, 1], [0, 0, 0]]])  # (2, 2, 3)
    nested = char_ids.reshape(1, 2, 2, 3)  # (1 document, 2 sentences, 2 tokens, 3 chars)
    torch.testing.assert_close(chars(nested)[0], chars(char_ids))


def test_char_cnn_gradients_match_the_per_word_loop() -> None:
    torch.manual_seed(3)
    vocab = char_vocab(10)
    cnn = CharacterCnn(vocab, embedding_dim=4, num_filters=5, ngram_filter_sizes=[2, 4])
    chars = random_chars(3, 5, 7, vocab.size("token_characters"), torch.Generator().manual_seed(4))
    chars[0, 1] = torch.tensor([2, 3, 0, 0, 0, 0, 0])  # shorter than one filter
    weights = torch.randn(3, 5, cnn.output_dim)
    ours = torch.autograd.grad((cnn(chars) * weights).sum(), list(cnn.parameters()))
    loop = torch.autograd.grad((brute_force(cnn, chars) * weights).sum(), list(cnn.parameters()))
    for a, b in zip(ours, loop, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
