"""The biLM's context-independent token layer: char CNN -> max-pool -> highway -> projection."""

from __future__ import annotations

import torch

from elmo_experiments.bilm.characters import MAX_CHARACTERS, PAD_CHAR
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.precision import autocast_dtype

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}
_CHUNK_TOKENS = 64
PAD_ID = PAD_CHAR + 1  # the shifted id of the padding character


class CharacterEncoder(torch.nn.Module):
    """Maps (tokens, 50) character ids to (tokens, projection_dim) vectors.

    Layout follows the released weights (row vectors, y = x W + b); convolutions are stored in
    PyTorch's (out, in, width) layout. With ``cache_tokens`` and no gradient, each distinct
    token is encoded once and remembered (the encoder is frozen, so results never change).
    """

    def __init__(self, options: BilmOptions) -> None:
        super().__init__()
        e, f, p = options.char_embedding_dim, options.num_filters, options.projection_dim
        self.char_embedding = torch.nn.Parameter(torch.zeros(options.n_characters, e))
        self.conv_weights = torch.nn.ParameterList(
            torch.nn.Parameter(torch.zeros(n, e, w)) for w, n in options.filters)
        self.conv_biases = torch.nn.ParameterList(
            torch.nn.Parameter(torch.zeros(n)) for _, n in options.filters)
        # highway k: [carry | transform] side by side, (F, 2F) and (2F,)
        self.highway_weights = torch.nn.ParameterList(
            torch.nn.Parameter(torch.zeros(f, 2 * f)) for _ in range(options.n_highway))
        self.highway_biases = torch.nn.ParameterList(
            torch.nn.Parameter(torch.zeros(2 * f)) for _ in range(options.n_highway))
        self.projection_weight = torch.nn.Parameter(torch.zeros(f, p))
        self.projection_bias = torch.nn.Parameter(torch.zeros(p))
        self.activation = ACTIVATIONS[options.activation]
        self.num_filters = f
        self.widest = max(width for width, _ in options.filters)
        self.output_dim = p
        self.cache_tokens = False
        self._cache: dict[bytes, torch.Tensor] = {}

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Random initialisation for training from scratch (padding row stays zero)."""
        with torch.no_grad():
            self.char_embedding.uniform_(-1.0, 1.0, generator=generator)
            self.char_embedding[0].zero_()
            for weight, bias in zip(self.conv_weights, self.conv_biases, strict=True):
                bound = (1.0 / (weight.shape[1] * weight.shape[2])) ** 0.5
                weight.uniform_(-bound, bound, generator=generator)
                bias.zero_()
            for weight, bias in zip(self.highway_weights, self.highway_biases, strict=True):
                weight.normal_(0.0, (1.0 / self.num_filters) ** 0.5, generator=generator)
                bias.zero_()
                bias[: self.num_filters].fill_(-2.0)  # the gate (carry) starts mostly closed
            self.projection_weight.normal_(0.0, (1.0 / self.num_filters) ** 0.5,
                                           generator=generator)
            self.projection_bias.zero_()

    def clear_cache(self) -> None:
        self._cache.clear()

    def _convolve(self, chars: torch.Tensor, length: int, pad: torch.Tensor) -> torch.Tensor:
        """Max over positions of every valid convolution, as one matrix product per width.

        chars: (tokens, >= length + widest - 1, e), tokens at most ``length`` characters long
        (BOW and EOW included), then padding; pad: (e,) the padding character's embedding.
        Windows wholly in padding all give one value per filter, computed once; so only the
        windows that start inside the longest token are multiplied. -> (tokens, F). Windows
        come from ``unfold`` in (e, width) order, the flattened layout of a (n, e, width) weight.
        """
        tokens, _, dim = chars.shape
        low = autocast_dtype(chars.device.type)
        if low is not None:  # the windows' copy in the products' precision, made once
            chars, pad = chars.to(low), pad.to(low)
        pooled = []
        for weight, bias in zip(self.conv_weights, self.conv_biases, strict=True):
            count, _, width = weight.shape
            flat = weight.reshape(count, -1).t()  # (e * width, n)
            valid = MAX_CHARACTERS - width + 1  # window positions in a 50-character token
            positions = min(length, valid)
            windows = chars[:, : positions + width - 1].unfold(1, width, 1)
            scores = torch.addmm(bias, windows.reshape(tokens * positions, dim * width), flat)
            best = scores.view(tokens, positions, count).amax(dim=1)  # (tokens, n_i)
            if positions < valid:  # some windows lie wholly in padding
                padding = torch.addmm(bias, pad[:, None].expand(dim, width).reshape(1, -1), flat)
                best = torch.maximum(best, padding)
            pooled.append(best)
        return torch.cat(pooled, dim=1)

    def _encode(self, ids: torch.Tensor) -> torch.Tensor:
        # ids: (tokens, 50). Each distinct token once, in chunks of similar length (the
        # products then skip most of the padding and keep their output in cache).
        unique, inverse = torch.unique(ids, dim=0, return_inverse=True)  # (types, 50)
        lengths = (unique != PAD_ID).sum(dim=1)  # characters with BOW and EOW
        order = torch.argsort(lengths)
        unique, lengths = unique[order], lengths[order].tolist()
        pad = self.char_embedding[PAD_ID]
        convolved = []
        for start in range(0, len(unique), _CHUNK_TOKENS):
            chunk = unique[start : start + _CHUNK_TOKENS]
            length = lengths[min(start + _CHUNK_TOKENS, len(unique)) - 1]
            chars = torch.nn.functional.embedding(
                chunk[:, : min(MAX_CHARACTERS, length + self.widest - 1)], self.char_embedding)
            convolved.append(self._convolve(chars, length, pad))
        x = self.activation(torch.cat(convolved))  # (types, F), in length order
        f = self.num_filters
        for weight, bias in zip(self.highway_weights, self.highway_biases, strict=True):
            both = torch.addmm(bias, x, weight)  # (types, 2F)
            gate = torch.sigmoid(both[:, :f])
            transformed = torch.relu(both[:, f:])
            x = gate * transformed + (1.0 - gate) * x  # (types, F)
        projected = torch.addmm(self.projection_bias, x, self.projection_weight)  # (types, P)
        rank = torch.empty_like(order)
        rank[order] = torch.arange(len(order), device=order.device)
        return projected[rank[inverse]]  # (tokens, P)

    def _encode_cached(self, ids: torch.Tensor) -> torch.Tensor:
        keys = [row.tobytes() for row in ids.numpy()]
        first = {}
        for position, key in enumerate(keys):
            if key not in self._cache:
                first.setdefault(key, position)
        missing = list(first)
        if missing:
            rows = ids[torch.tensor([first[k] for k in missing])]  # (new, 50)
            for key, vector in zip(missing, self._encode(rows), strict=True):
                self._cache[key] = vector.clone()
        return torch.stack([self._cache[k] for k in keys])  # (tokens, P)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # ids: (batch, seq, 50) -> (batch, seq, P), zero where the token is padding
        batch, seq, _ = ids.shape
        mask = (ids > 0).any(dim=2)  # (batch, seq)
        real = ids[mask]  # (tokens, 50)
        use_cache = self.cache_tokens and not torch.is_grad_enabled() and ids.device.type == "cpu"
        encoded = self._encode_cached(real) if use_cache else self._encode(real)
        out = encoded.new_zeros(batch, seq, self.output_dim)
        out[mask] = encoded
        return out
