"""The Python API: ELMo in plain PyTorch code, and trained models applied to text.

    from elmo_experiments import Elmo, ElmoEmbedder, batch_to_ids, load_archive, Predictor

``Elmo``, ``ElmoEmbedder`` and ``batch_to_ids`` follow AllenNLP's names and outputs;
``Predictor`` applies a trained model (a ``model.tar.gz`` or a run directory) to raw text or
tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from elmo_experiments import components
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.elmo_embedder import ElmoTokenEmbedder
from elmo_experiments.bilm.elmo_embedder_compat import ElmoEmbedder
from elmo_experiments.data.fields import TextField, target_fields, text_fields
from elmo_experiments.errors import DataError
from elmo_experiments.run import Assembled, load_run

components.load()  # the Python API is an entry point: every component registered

__all__ = ["Elmo", "ElmoEmbedder", "Predictor", "batch_to_ids", "load_archive"]


class Elmo(torch.nn.Module):
    """``num_output_representations`` scalar mixes of a frozen biLM's layers, each with its own
    weights and γ (the paper's eq. 1), with dropout. ``forward(character_ids)`` takes
    ``batch_to_ids`` output, (batch, tokens, 50), and returns ``elmo_representations`` (a list
    of (batch, tokens, dim)) and ``mask`` (batch, tokens).

    The biLM comes from ``options_file`` + ``weight_file``, or from ``weights``: a directory
    holding the two files (any names) or a known name (``gutenberg`` ships with the package).
    """

    def __init__(self, options_file: str | None = None, weight_file: str | None = None,
                 num_output_representations: int = 1, requires_grad: bool = False,
                 do_layer_norm: bool = False, dropout: float = 0.5, *,
                 weights: str | None = None, precision: str = "fp32") -> None:
        super().__init__()
        mixes = [{"layer_norm": do_layer_norm} for _ in range(num_output_representations)]
        self.embedder = ElmoTokenEmbedder(weights, mixes, dropout=dropout,
                                          requires_grad=requires_grad,
                                          cache={"enabled": False}, precision=precision,
                                          options_file=options_file, weight_file=weight_file)

    def get_output_dim(self) -> int:
        return int(self.embedder.representation_dim)

    def forward(self, character_ids: torch.Tensor) -> dict[str, Any]:
        embedded = self.embedder(character_ids)  # one (batch, tokens, dim) per mix
        return {"elmo_representations": [embedded.input, *embedded.extra],
                "mask": (character_ids > 0).any(dim=-1)}  # (batch, tokens)


def load_archive(path: str | Path, device: str = "cpu", weights: str = "best.pt") -> Assembled:
    """A trained model from a ``model.tar.gz`` or a run directory: ``.model``, ``.reader``,
    ``.vocab``, ``.experiment`` (its validated config)."""
    return load_run(path, weights, device)


class Predictor:
    """Applies a trained model to text. Taggers give tokens, tags (in the data's scheme) and
    entity spans with scores; classifiers the label and every label's probability."""

    def __init__(self, run: Assembled) -> None:
        self.run = run

    @classmethod
    def from_path(cls, path: str | Path, device: str = "cpu", threads: int | None = None
                  ) -> Predictor:
        """The model of a run directory or ``model.tar.gz`` (``threads``: torch's compute
        threads for the process; None leaves them as they are)."""
        if threads is not None:
            from elmo_experiments.threads import set_threads

            set_threads(threads)
        return cls(load_archive(path, device))

    def predict(self, text: str, language: str | None = None) -> list[dict[str, Any]]:
        """One record per sentence of raw ``text`` (split and tokenised as in training, with
        the rules of ``language``: default the reader's ``language``, else English)."""
        from elmo_experiments.data.languages import language_of
        from elmo_experiments.data.tokenizers import split_sentences

        code = language_of(self.run.reader, language)
        return self.predict_tokens(split_sentences(text.strip(), code) if text.strip() else [])

    def predict_tokens(self, sentences: list[list[str]]) -> list[dict[str, Any]]:
        """One record per already tokenised sentence."""
        reader = self.run.reader
        texts = text_fields(reader.fields)
        if len(texts) != 1 or not isinstance(reader.fields[texts[0]], TextField):
            raise DataError(f"this model reads {' + '.join(texts)}, not single sentences: use "
                            f"predict_instances with the reader's instances")
        return self.predict_instances([reader.text_to_instance(tokens) for tokens in sentences])

    def predict_instances(self, instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One record per instance (dicts of the reader's fields; targets are ignored)."""
        from elmo_experiments.predict import predictions_for

        unlabelled = dict.fromkeys(target_fields(self.run.reader.fields))
        return predictions_for(self.run, [{**i, **unlabelled} for i in instances], "<python>")
