"""Table 4: the SemCor occurrences of a word nearest to it in context, by the biLM's top
layer, beside its nearest words by static (GloVe-format) vectors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from elmo_experiments.errors import DataError
from elmo_experiments.probing.activations import iter_layers, load_runner
from elmo_experiments.probing.senses import Sentence


@dataclass(frozen=True)
class Neighbour:
    """One SemCor occurrence: its sentence, token position, cosine and sense keys (if tagged)."""

    sentence: Sentence
    position: int
    cosine: float
    keys: tuple[str, ...] = ()

    def marked(self) -> str:
        """The sentence with the matching word in ``[[ ]]``."""
        tokens = list(self.sentence.tokens)
        tokens[self.position] = f"[[{tokens[self.position]}]]"
        return " ".join(tokens)


def occurrences(sentences: Sequence[Sentence], word: str) -> list[tuple[int, int]]:
    """(sentence index, token position) of every token equal to ``word`` (case-insensitive)."""
    target = word.lower()
    return [(i, t) for i, s in enumerate(sentences) for t, token in enumerate(s.tokens)
            if token.lower() == target]


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def query_position(tokens: Sequence[str], word: str) -> int:
    """The first position of ``word`` in ``tokens``; a ``DataError`` if it is not there."""
    for position, token in enumerate(tokens):
        if token.lower() == word.lower():
            return position
    raise DataError(f"{word!r} is not a token of the sentence {' '.join(tokens)!r}")


def rank(query: np.ndarray, vectors: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k rows of ``vectors`` (n, dim) most cosine-similar to ``query`` (dim,), best first;
    ties keep row order."""
    norms = np.maximum(np.linalg.norm(vectors, axis=1), 1e-12)
    cosines = vectors @ _unit(query) / norms  # (n,)
    order = np.argsort(-cosines, kind="stable")[:k]
    return [(int(i), float(cosines[i])) for i in order]


def nearest_in_context(weights: str, word: str, sentence: Sequence[str],
                       corpus: Sequence[Sentence], k: int = 5, device: str = "cpu",
                       batch_size: int = 32) -> list[Neighbour]:
    """The k occurrences of ``word`` in ``corpus`` nearest ``word`` in ``sentence`` (top layer)."""
    position = query_position(sentence, word)
    found = occurrences(corpus, word)
    if not found:
        raise DataError(f"{word!r} does not occur in the corpus")
    runner = load_runner(weights, device)
    (_, query_layers), = iter_layers(runner, [list(sentence)], 1)
    query = query_layers[-1][position].astype(np.float32)  # (dim,)
    indices = sorted({i for i, _ in found})
    top: dict[int, np.ndarray] = {}
    for local, layers in iter_layers(runner, [corpus[i].tokens for i in indices], batch_size):
        top[indices[local]] = layers[-1]  # (tokens, dim)
    vectors = np.stack([top[i][t] for i, t in found]).astype(np.float32)  # (occurrences, dim)
    result = []
    for row, cosine in rank(query, vectors, k):
        i, t = found[row]
        keys = next((a.keys for a in corpus[i].annotations if a.start <= t < a.end), ())
        result.append(Neighbour(corpus[i], t, cosine, keys))
    return result


def read_static_vectors(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Words and their (words, dim) float32 vectors from a GloVe-format text file (``word v1 v2
    ...`` per line; a word2vec ``count dim`` header line is skipped)."""
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.rstrip().split(" ")
            if number == 1 and len(fields) == 2 and all(f.isdigit() for f in fields):
                continue
            if len(fields) < 2:
                continue
            dim = dim or len(fields) - 1
            if len(fields) - 1 != dim:
                raise DataError(f"{path}:{number}: {len(fields) - 1} values, not {dim}")
            words.append(fields[0])
            rows.append(np.asarray(fields[1:], dtype=np.float32))
    if not rows:
        raise DataError(f"{path}: no vectors")
    return words, np.stack(rows)


def nearest_static(word: str, words: list[str], vectors: np.ndarray,
                   k: int = 5) -> list[tuple[str, float]]:
    """The k words nearest ``word`` by cosine (itself excluded; exact case first, then any)."""
    index = {w: i for i, w in enumerate(words)}
    row = index.get(word, next((i for i, w in enumerate(words) if w.lower() == word.lower()),
                               None))
    if row is None:
        raise DataError(f"{word!r} has no static vector")
    ranked = rank(vectors[row], vectors, k + 1)
    return [(words[i], c) for i, c in ranked if i != row][:k]


def format_neighbours(word: str, sentence: Sequence[str], found: list[Neighbour],
                      static: list[tuple[str, float]] | None) -> str:
    """Table 4's layout: the query, then the biLM's and the static vectors' neighbours."""
    position = query_position(sentence, word)
    marked = [f"[[{t}]]" if i == position else t for i, t in enumerate(sentence)]
    lines = [f"query: {' '.join(marked)}", "", "biLM (top layer), nearest SemCor occurrences:"]
    for rank_, neighbour in enumerate(found, 1):
        keys = f"  ({', '.join(neighbour.keys)})" if neighbour.keys else ""
        lines.append(f"{rank_:>3}. {neighbour.cosine:.3f}  {neighbour.marked()}{keys}")
    if static is not None:
        lines += ["", "static vectors, nearest words:",
                  "  " + ", ".join(f"{w} ({c:.3f})" for w, c in static)]
    return "\n".join(lines)
