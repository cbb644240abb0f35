"""The ``elmo`` token embedder: a frozen biLM, one scalar mix per placement, dropout."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import torch

from elmo_experiments.bilm.bidirectional_lm import remove_boundaries
from elmo_experiments.bilm.external import ELMO_FILES
from elmo_experiments.bilm.pretrained import resolve_bilm, source_problem, weights_problem
from elmo_experiments.bilm.state import STATE_MODES, BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.config.registry import NO_SETTINGS, Check, Param, Probability, register
from elmo_experiments.data.files import file_problem
from elmo_experiments.errors import ConfigError
from elmo_experiments.modules.dropout import Dropout
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
from elmo_experiments.precision import PRECISIONS


class ElmoTokenEmbedder(torch.nn.Module):
    """Returns ``Embedded``: the first mix (the input placement), and the later mixes as values.

    Each mix is its own ``ScalarMix`` (Peters et al. 2018, §3.3: separate s and γ per placement).
    With ``at_input: false`` ELMo is at the output only: the input part is empty (width 0) and
    every mix is an extra representation.
    """

    def __init__(self, weights: Annotated[str | None, Check(weights_problem)] = None,
                 mixes: Sequence[Mapping[str, Any]] = ONE_MIX, dropout: Probability = 0.5,
                 requires_grad: bool = False, state: str = "stateless",
                 warmup_file: str | None = None, cache: Mapping[str, Any] | None = NO_SETTINGS,
                 char_cache: bool = True, at_input: bool = True, precision: str = "fp32",
                 options_file: Annotated[str | None, Check(file_problem)] = None,
                 weight_file: Annotated[str | None, Check(file_problem)] = None) -> None:
        """``weights``: a directory holding one ``*options.json`` and one ``*weights.hdf5``,
        or a known name (shipped or released); or ``options_file`` and ``weight_file`` as in
        AllenNLP. ``mixes``: one scalar-mix config per placement (input, then output);
        ``at_input`` false: ELMo at the output only (every mix extra). ``precision``: the
        biLM's inference precision; bf16 is fast only on CPUs with bf16 matrix units
        (elsewhere fp32 runs unless ``ELMO_FORCE_BF16=1``)."""
        super().__init__()
        bilm = load_bilm(*resolve_bilm(weights, options_file, weight_file))
        bilm.requires_grad_(requires_grad)
        warmup = None
        if warmup_file is not None:
            with open(warmup_file, encoding="utf-8") as handle:
                warmup = [line.strip() for line in handle if line.strip()]
        self.runner = BilmRunner(bilm, state, warmup, precision)
        self.mixes = Placements(bilm.num_layers, bilm.output_dim, mixes, at_input)
        self.dropout = Dropout(dropout)
        self.requires_grad = requires_grad
        bilm.char_encoder.cache_tokens = char_cache and not requires_grad
        self.cache: ActivationCache | None = None
        if state != "stateful" and not requires_grad:
            self.cache = configured_cache(cache or {})
        if state == "warm" and requires_grad:
            raise ConfigError(["state: 'warm' needs a frozen biLM (requires_grad: false)"])
        self.at_input = at_input  # where the first mix goes (the mix log names placements)
        self.representation_dim, self.output_dim = bilm.output_dim, self.mixes.input_dim
        self.extra_dim = self.representation_dim * self.mixes.extra

    @property
    def caching(self) -> bool:
        """Whether outputs depend on what earlier batches left in a cache (activations, or
        the character encoder's per-token vectors): a resumed run refills them."""
        return self.cache is not None or bool(self.runner.bilm.char_encoder.cache_tokens)

    def _layers(self, ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Layers with BOS/EOS (L+1) x (batch, seq + 2, dim) and their mask."""
        if self.cache is None:
            if self.requires_grad:
                return self.runner.with_boundaries(ids)
            with torch.no_grad():
                return self.runner.with_boundaries(ids)
        return self._cached_layers(ids)

    def _cached_layers(self, ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """``_layers`` through the cache (keys: the weights actually loaded, as a checkpoint may
        have replaced the files', and the state rule): only sentences not seen yet run."""
        cache = self.cache
        assert cache is not None
        cache.open_namespace(lambda: f"{state_digest(self.runner.bilm)}|"
                                     f"{self.runner.state_key()}")
        lengths = (ids > 0).any(dim=2).sum(dim=1).tolist()
        rows = ids.cpu().numpy()
        keys: list[str | None] = [cache.key(rows[i, :n]) for i, n in enumerate(lengths)]

        def compute(missing: list[int]) -> torch.Tensor:
            width = max(lengths[i] for i in missing)
            with torch.no_grad():
                layers, _ = self.runner.with_boundaries(ids[missing][:, :width])
            return torch.stack(layers, dim=1)  # (missing, layers, width + 2, dim)

        seq = ids.shape[1] + 2
        out = read_through(cache, keys, [n + 2 for n in lengths],
                           (ids.shape[0], self.runner.bilm.num_layers, seq,
                            self.representation_dim), compute).to(ids.device)
        lengths_b = torch.tensor(lengths, device=ids.device) + 2
        mask = torch.arange(seq, device=ids.device)[None, :] < lengths_b[:, None]
        return list(out.unbind(dim=1)), mask

    def forward(self, ids: torch.Tensor) -> Embedded:
        # ids: (..., seq, 50), e.g. a document's (batch, sentences, seq, 50): every sentence is
        # run on its own -> input (..., seq, 2P) and one (..., seq, 2P) per further mix
        *leading, seq, width = ids.shape
        rows = math.prod(leading)  # explicit: a batch of empty sentences has seq 0
        layers, mask = self._layers(ids.reshape(rows, seq, width))  # with boundaries: mixing
        # and layer norm see BOS/EOS
        return self.mixes.embed(layers, mask, self.dropout, (*leading, seq),
                                lambda mixed: remove_boundaries(mixed, mask))

    def mix_report(self) -> list[dict[str, Any]]:
        """The normalised layer weights s and γ of every mix (logged each epoch)."""
        return self.mixes.report()


register(
    "token_embedder",
    "elmo",
    params=[Param("mixes", fields=MIX_PARAMS, sequence=True),
            Param("cache", fields=CACHE_PARAMS), Param("state", choices=STATE_MODES),
            Param("precision", choices=PRECISIONS)],
    check=source_problem,
    external_files=ELMO_FILES,
)(ElmoTokenEmbedder)
