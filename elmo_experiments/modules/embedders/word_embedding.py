"""Word embeddings: random or loaded from a GloVe / word2vec text file (``.gz`` too)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import torch

from elmo_experiments.config.external import ExternalFiles, Found
from elmo_experiments.config.registry import Check, Size, register
from elmo_experiments.data.files import data_file_problem, iter_lines, resolve_data_path, sha1_of
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError


def read_pretrained(path: str, dim: int, wanted: set[str]) -> dict[str, list[float]]:
    """Vectors for the ``wanted`` words (exact or lowercased) from a text embedding file.

    Accepts GloVe (``word v1 .. vD``) and word2vec text (a ``count dim`` header line first).
    """
    resolved = resolve_data_path(path)
    found: dict[str, list[float]] = {}
    for number, line in iter_lines(resolved):
        fields = line.rstrip().split(" ")
        if number == 1 and len(fields) == 2 and all(f.isdigit() for f in fields):
            if int(fields[1]) != dim:
                raise DataError(f"{resolved}:1: vectors have {fields[1]} dims, config says {dim}")
            continue
        if len(fields) != dim + 1:
            raise DataError(
                f"{resolved}:{number}: expected a word and {dim} values, found {len(fields) - 1}"
            )
        if fields[0] in wanted:
            try:
                found[fields[0]] = [float(x) for x in fields[1:]]
            except ValueError:
                raise DataError(f"{resolved}:{number}: non-numeric vector value") from None
    return found


class WordEmbedding(torch.nn.Module):
    """Looks up one vector per token id; id 0 (padding) is a zero vector."""

    def __init__(
        self,
        vocab: Vocabulary,
        embedding_dim: Size,
        vocab_namespace: str = "tokens",
        pretrained_file: Annotated[str | None, Check(data_file_problem)] = None,  # word
        trainable: bool = True,  # vectors (GloVe text format, .gz too)
    ) -> None:
        super().__init__()
        num = vocab.size(vocab_namespace)
        weight = torch.empty(num, embedding_dim)
        torch.nn.init.xavier_uniform_(weight)
        if pretrained_file:
            words = vocab.tokens(vocab_namespace)
            wanted = set(words) | {w.lower() for w in words}
            vectors = read_pretrained(pretrained_file, embedding_dim, wanted)
            if vectors:
                stacked = torch.tensor(list(vectors.values()))
                weight.normal_(stacked.mean().item(), stacked.std().item())
                for index, word in enumerate(words):
                    vector = vectors.get(word, vectors.get(word.lower()))
                    if vector is not None:
                        weight[index] = torch.tensor(vector)
        weight[0] = 0.0
        self.weight = torch.nn.Parameter(weight, requires_grad=trainable)
        self.output_dim = embedding_dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # ids: (batch, seq) -> (batch, seq, dim)
        return torch.nn.functional.embedding(ids, self.weight, padding_idx=0)


def _vector_file(params: dict[str, Any]) -> Found | None:
    """The word vectors an embedding reads (if any) and their SHA-1."""
    name = params.get("pretrained_file")
    if not name:
        return None
    path = Path(name)
    digest = sha1_of(path)
    return Found({"vectors": path}, digest, {"file": str(path.resolve()), "sha1": digest})


def _forget_vectors(params: dict[str, Any]) -> None:
    """A trained model's weights hold the vectors: not read again when it is loaded."""
    if params.get("pretrained_file") is not None:
        params["pretrained_file"] = None


VECTOR_FILES = ExternalFiles("vectors", _vector_file, unpacked=_forget_vectors)

register(
    "token_embedder",
    "embedding",
    context=("vocab",),
    external_files=VECTOR_FILES,
)(WordEmbedding)
