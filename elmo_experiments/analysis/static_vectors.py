"""``elmo-exp vectors``: static word vectors (gensim word2vec skip-gram), a GloVe stand-in.

The corpus is read and tokenised exactly as biLM pretraining reads it (``corpus.py``: raw or
tokenized text; files, folders, globs, ``.gz``), once, into a temporary one-sentence-a-line
file beside the output; gensim then trains on that file. The vectors are written in GloVe's
text format (``word v1 .. vD``, no header), which the ``embedding`` token embedder reads as its
``pretrained_file``, with a JSON sidecar ``OUT.json`` saying how they were made.

gensim multiplies through scipy's OpenBLAS, which picks its kernels by CPU, and kernels for
different vector units round differently: with one seed, an AVX-512 EPYC and an AVX2 one made
different files. So the vectors are trained with OpenBLAS's Haswell kernels (AVX2 and FMA) on
every x86-64 CPU that has those units, which makes the files identical across such machines.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.bilm.pretraining.corpus import expand, read_sentences
from elmo_experiments.data.files import atomic_write, sha1_of, write_error
from elmo_experiments.errors import DataError, ElmoError, WriteError
from elmo_experiments.precision import cpu_flags

FORMATS = ("raw", "tokenized")
PORTABLE_KERNELS = "Haswell"  # OpenBLAS's kernels for AVX2 + FMA (x86-64 CPUs since 2013)
KERNELS_VARIABLE = "OPENBLAS_CORETYPE"  # read once, when OpenBLAS loads


def portable_kernels(flags: frozenset[str] | None, environ: dict[str, str]) -> str | None:
    """The OpenBLAS kernel set to ask for: the one already asked for in ``environ``, else the
    Haswell kernels where the CPU has AVX2 and FMA, else None (OpenBLAS's own choice)."""
    if environ.get(KERNELS_VARIABLE):
        return environ[KERNELS_VARIABLE]
    return PORTABLE_KERNELS if flags is not None and {"avx2", "fma"} <= flags else None


def _pin_kernels() -> None:
    """Ask OpenBLAS for the portable kernels before scipy loads it (too late once loaded)."""
    kernels = portable_kernels(cpu_flags(), dict(os.environ))
    if kernels is not None and not any(name.split(".")[0] == "scipy" for name in sys.modules):
        os.environ[KERNELS_VARIABLE] = kernels


def blas_kernels() -> str | None:
    """The kernel set scipy's OpenBLAS runs (as threadpoolctl reports it), None if unknown."""
    try:
        import scipy.linalg.blas  # noqa: F401  (loads OpenBLAS)
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    found = [info.get("architecture") for info in threadpool_info()  # not numpy's own
             if info.get("internal_api") == "openblas" and "numpy" not in info["filepath"]]
    return found[0] if found else None


def _gensim() -> Any:
    try:
        import gensim
    except ImportError:
        raise ElmoError("elmo-exp vectors needs gensim: pip install -e '.[vectors]'") from None
    return gensim


class _SentenceFile:
    """A restartable iterable over a one-sentence-a-line, space-separated file (gensim reads
    the corpus once for the vocabulary and once per epoch)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[list[str]]:
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                yield line.rstrip("\n").split(" ")


def _tokenise(corpus: str, fmt: str, out: Path, exclude: str | None = None,
              report: dict[str, Any] | None = None, output: str | None = None
              ) -> tuple[int, int]:
    """Write the corpus's sentences to ``out``, one a line, the documents of ``exclude`` cut
    out first (as in pretraining); (sentences, tokens). A failed write (a full disk) is a
    one-line ``WriteError`` naming ``output``, the file ``out`` is written for (``out`` itself
    is a temporary), or ``out``."""
    sentences = tokens = 0

    def failed(error: OSError) -> WriteError:
        if output is None:
            return write_error(out, error)
        return WriteError(f"{write_error(Path(output), error)} (writing the tokenised corpus "
                          f"to a temporary file beside it)")

    # ``out`` lies in the temporary folder of train_vectors, deleted after use: written directly
    try:
        handle = open(out, "w", encoding="utf-8")  # noqa: SIM115  (closed below)
    except OSError as error:
        raise failed(error) from None
    try:  # only the writes are caught: the corpus's reading errors are DataErrors already
        for sentence in read_sentences(corpus, fmt, exclude, report):
            # a token never holds whitespace in the GloVe format: split any such token
            words = [piece for token in sentence for piece in token.split()]
            if words:
                try:
                    handle.write(" ".join(words) + "\n")
                except OSError as error:
                    raise failed(error) from None
                sentences += 1
                tokens += len(words)
        try:
            handle.close()
        except OSError as error:
            raise failed(error) from None
    finally:
        with contextlib.suppress(OSError):  # after a failure: its buffer cannot be written
            handle.close()
    return sentences, tokens


def _write_glove(path: str, words: list[str], vectors: Any) -> None:
    """``word v1 .. vD`` lines, written atomically (vectors: (words, dim) float32)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            for word, vector in zip(words, vectors, strict=True):
                handle.write(word + " " + " ".join(f"{x:.7g}" for x in vector.tolist()) + "\n")

    atomic_write(path, write)


def train_vectors(corpus: str, output: str, dim: int = 100, fmt: str = "raw",
                  min_count: int = 5, epochs: int = 5, workers: int = 2,
                  seed: int = 1, window: int = 5, exclude: str | None = None) -> dict[str, Any]:
    """Train skip-gram vectors on ``corpus`` and write them to ``output`` (GloVe text) and
    ``output + '.json'`` (settings, corpus digest, vocabulary size, wall time); the sidecar's
    contents are returned. ``exclude``: CoNLL-2012 documents cut out of raw text first (the
    pretraining corpus's ``exclude``). ``workers=1`` with a fixed ``seed`` gives identical
    files, on any x86-64 CPU with AVX2 (the module's docstring)."""
    _pin_kernels()
    gensim = _gensim()
    if fmt not in FORMATS:
        raise DataError(f"{corpus}: format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    from gensim.models import Word2Vec

    start = time.perf_counter()
    files = expand(corpus)
    try:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        scratch = tempfile.TemporaryDirectory(prefix=".vectors-", dir=Path(output).parent)
    except OSError as error:
        raise write_error(Path(output), error) from None
    with scratch as folder:
        sentence_file = Path(folder) / "sentences.txt"
        excluded: dict[str, Any] = {}
        sentences, tokens = _tokenise(corpus, fmt, sentence_file, exclude, excluded, output)
        if not sentences:
            raise DataError(f"{corpus}: no sentences to train word vectors on")
        read_seconds = time.perf_counter() - start
        model = Word2Vec(vector_size=dim, sg=1, window=window, min_count=min_count,
                         workers=workers, seed=seed, epochs=epochs)
        model.build_vocab(corpus_iterable=_SentenceFile(sentence_file))
        if not len(model.wv):
            raise DataError(f"{corpus}: no word occurs {min_count} times or more "
                            f"({tokens} tokens); lower --min-count")
        model.train(corpus_iterable=_SentenceFile(sentence_file),
                    total_examples=model.corpus_count, epochs=model.epochs)
    train_seconds = time.perf_counter() - start - read_seconds
    _write_glove(output, list(model.wv.index_to_key), model.wv.vectors)
    summary = {
        "command": "elmo-exp vectors",
        "settings": {"dim": dim, "format": fmt, "min_count": min_count, "epochs": epochs,
                     "workers": workers, "seed": seed, "window": window,
                     "algorithm": "word2vec skip-gram, negative sampling"},
        "corpus": {"path": corpus, "files": len(files),
                   "bytes": sum(f.stat().st_size for f in files), "sha1": sha1_of(*files),
                   "sentences": sentences, "tokens": tokens,
                   "exclude": exclude, "excluded": excluded},
        "vocabulary_size": len(model.wv),
        "output": str(output),
        "read_seconds": round(read_seconds, 3),
        "train_seconds": round(train_seconds, 3),
        "wall_time_s": round(time.perf_counter() - start, 3),
        "gensim_version": gensim.__version__,
        "blas_kernels": blas_kernels(),
    }
    atomic_write(f"{output}.json", lambda tmp: Path(tmp).write_text(
        json.dumps(summary, indent=2) + "\n", encoding="utf-8"))
    return summary
