"""``ElmoEmbedder``: the class AllenNLP 0.9 users (and Flair's ELMo embeddings) call, over any
biLM this framework loads.

    from elmo_experiments import ElmoEmbedder
    embedder = ElmoEmbedder()                      # the shipped 'gutenberg' biLM
    vectors = embedder.embed_sentence(["I", "ate", "an", "apple", "."])  # (3, 5, dim)

The methods keep AllenNLP's names, arguments and shapes: ``embed_sentence``, ``embed_batch``,
``embed_sentences`` (a generator, ``batch_size`` at a time) and ``embed_file`` (HDF5: one dataset
per line, keyed by its index or by the sentence, plus ``sentence_to_index``). Unlike AllenNLP's
(which carries the LSTM states from batch to batch), the biLM is stateless by default, so a
sentence's vectors do not depend on what was embedded before it; ``state="stateful"`` gives
AllenNLP's behaviour. The layers are those of ``elmo-exp embed`` and of ``Elmo`` before mixing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from itertools import islice
from numbers import Integral
from pathlib import Path
from typing import IO

import numpy as np
import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.embed import check_batch_size, text_lines
from elmo_experiments.bilm.pretrained import resolve_bilm
from elmo_experiments.bilm.state import BilmRunner
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.data.files import resolve_data_path
from elmo_experiments.errors import DataError
from elmo_experiments.threads import set_threads

DEFAULT_BATCH_SIZE = 64  # AllenNLP's
DEFAULT_WEIGHTS = "gutenberg"  # shipped in the package: works offline
OUTPUT_FORMATS = ("all", "top", "average")


def check_tokens(sentence: object, where: str) -> None:
    """A sentence is a list (or tuple) of strings; a one-line ``DataError`` otherwise."""
    if isinstance(sentence, str):
        raise DataError(f"{where}: a string ({sentence[:40]!r}), not a list of tokens; split it "
                        f"into tokens first, e.g. {sentence[:40]!r}.split(), or use "
                        f"elmo_experiments.data.tokenizers.tokenize")
    if not isinstance(sentence, list | tuple):
        raise DataError(f"{where}: a {type(sentence).__name__}, not a list of tokens")
    for position, token in enumerate(sentence):
        if not isinstance(token, str):
            raise DataError(f"{where}, token {position}: {token!r} is a "
                            f"{type(token).__name__}, not a string")


def sentence_key_problem(sentence: str) -> str | None:
    """Why ``sentence`` cannot be an HDF5 dataset's name (None: it can)."""
    if "/" in sentence:
        return "HDF5 reads '/' in a name as a path through groups"
    if "\0" in sentence:
        return "HDF5 ends a name at a NUL character"
    if sentence == ".":
        return "HDF5 reads '.' as the file's root group"
    return None


def cuda_device_problem(cuda_device: object) -> str | None:
    """What keeps ``cuda_device`` (-1: the CPU, N: the N-th GPU) from naming a device here."""
    if isinstance(cuda_device, bool) or not isinstance(cuda_device, Integral):
        return f"cuda_device must be a whole number (-1: the CPU), got {cuda_device!r}"
    if cuda_device < 0:
        return None
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        return f"cuda_device {cuda_device}: no CUDA device is available here; -1 is the CPU"
    if cuda_device >= count:
        return (f"cuda_device {cuda_device}: this machine has {count} CUDA device"
                f"{'s' if count > 1 else ''} (0 to {count - 1}); -1 is the CPU")
    return None


class ElmoEmbedder:
    """The biLM's layers for tokenised sentences, as numpy arrays of (layers, tokens, dim).

    ``options_file`` + ``weight_file`` name the two files as in AllenNLP; ``options_file``
    alone (or ``weights``) may be anything the framework loads: a directory holding the two
    files, a shipped name (``gutenberg``, the default) or a released one (``original``, ...).
    ``cuda_device`` -1 is the CPU, N the N-th GPU (one this machine has, else a ``DataError``).
    """

    def __init__(self, options_file: str | None = None, weight_file: str | None = None,
                 cuda_device: int = -1, *, weights: str | None = None,
                 state: str = "stateless", precision: str = "fp32",
                 threads: int | None = None) -> None:
        problem = cuda_device_problem(cuda_device)
        if problem:
            raise DataError(problem)
        if threads is not None:  # torch's compute threads, for the whole process
            set_threads(threads)
        if weights is None and weight_file is None:
            weights, options_file = options_file or DEFAULT_WEIGHTS, None
        bilm = load_bilm(*resolve_bilm(weights, options_file, weight_file))
        bilm.requires_grad_(False)
        self.device = torch.device("cpu" if cuda_device < 0 else f"cuda:{cuda_device}")
        bilm.to(self.device)
        self.runner = BilmRunner(bilm, state, precision=precision)
        self.runner.eval()
        bilm.char_encoder.cache_tokens = True
        self.cuda_device = cuda_device
        self.num_layers = int(bilm.num_layers)
        self.dim = int(bilm.output_dim)

    @classmethod
    def from_bilm(cls, bilm: torch.nn.Module, state: str = "stateless") -> ElmoEmbedder:
        """An embedder over a biLM already loaded (e.g. a trained model's), sharing its weights."""
        embedder = cls.__new__(cls)
        embedder.device = next(bilm.parameters()).device
        embedder.runner = BilmRunner(bilm, state)
        embedder.cuda_device = embedder.device.index or 0 if embedder.device.type == "cuda" \
            else -1
        embedder.num_layers = int(bilm.num_layers)
        embedder.dim = int(bilm.output_dim)
        return embedder

    def empty_embedding(self) -> np.ndarray:
        """What an empty sentence gets: (layers, 0, dim)."""
        return np.zeros((self.num_layers, 0, self.dim), dtype=np.float32)

    def batch_to_embeddings(self, batch: list[list[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, layers, tokens, dim) activations without BOS/EOS, and the (batch, tokens)
        mask."""
        ids = batch_to_ids(batch).to(self.device)
        with torch.no_grad():
            layers, mask = self.runner(ids)
        return torch.stack(layers, dim=1), mask

    def embed_sentence(self, sentence: list[str]) -> np.ndarray:
        """One sentence's layers: (layers, tokens, dim). ``sentence`` is a list of tokens; a
        bare string is refused (it would be embedded one character a token)."""
        return self.embed_batch([sentence])[0]

    def embed_batch(self, batch: list[list[str]]) -> list[np.ndarray]:
        """Each sentence's (layers, tokens, dim), computed as one batch (empty sentences get
        (layers, 0, dim)). Each sentence is a list of string tokens: anything else is a
        one-line ``DataError`` naming the sentence (and the token)."""
        if isinstance(batch, str):
            raise DataError(f"expected sentences (lists of tokens), got a string {batch[:40]!r}")
        if not isinstance(batch, Iterable):
            raise DataError(f"expected sentences (lists of tokens), got a "
                            f"{type(batch).__name__}")
        batch = list(batch)
        for number, sentence in enumerate(batch):
            check_tokens(sentence, f"sentence {number}")
        filled = [i for i, sentence in enumerate(batch) if sentence]
        out = [self.empty_embedding() for _ in batch]
        if filled:
            activations, _ = self.batch_to_embeddings([list(batch[i]) for i in filled])
            activations = activations.float().cpu()
            for row, i in enumerate(filled):
                out[i] = activations[row, :, : len(batch[i])].numpy()
        return out

    def embed_sentences(self, sentences: Iterable[list[str]],
                        batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[np.ndarray]:
        """Each sentence's layers, in order, computed ``batch_size`` sentences at a time."""
        check_batch_size(batch_size)
        if isinstance(sentences, str) or not isinstance(sentences, Iterable):
            raise DataError(f"expected sentences (lists of tokens), got a "
                            f"{type(sentences).__name__}")
        iterator = iter(sentences)
        while batch := list(islice(iterator, batch_size)):
            yield from self.embed_batch(batch)

    def embed_file(self, input_file: IO[str] | str | Path, output_file_path: str | Path,
                   output_format: str = "all", batch_size: int = DEFAULT_BATCH_SIZE,
                   forget_sentences: bool = False, use_sentence_keys: bool = False) -> None:
        """Embed a file of whitespace-tokenised sentences, one a line, into HDF5 (as AllenNLP's
        ``allennlp elmo`` and ``elmo-exp embed``): dataset ``"i"`` for line i (or the sentence
        itself with ``use_sentence_keys``), holding ``all`` layers, the ``top`` one or their
        ``average``; and ``sentence_to_index`` (JSON, sentence -> key; the last of duplicate
        lines wins, as in AllenNLP) unless ``forget_sentences`` or ``use_sentence_keys``.
        Lines end at \\n, \\r\\n or a lone \\r; a path is read as UTF-8 (bytes that are not: a
        ``DataError`` naming the line). Blank lines are refused, as in AllenNLP; so, before
        anything is embedded, are sentence keys HDF5 cannot hold as they are (a ``/``, a NUL,
        the sentence ``.``: AllenNLP failed on them) and repeated ones, naming the sentence. The
        file appears whole or not at all."""
        import h5py

        from elmo_experiments.data.files import atomic_write
        from elmo_experiments.data.hdf5_output import HDF5Output

        if output_format not in OUTPUT_FORMATS:
            raise DataError(f"output_format must be one of {OUTPUT_FORMATS}, got "
                            f"{output_format!r}")
        check_batch_size(batch_size)
        if (not isinstance(output_file_path, str | Path) or not str(output_file_path)
                or Path(output_file_path).is_dir()):
            raise DataError(f"output_file_path must be a file's path, got {output_file_path!r}")
        if isinstance(input_file, (str, Path)):
            input_file = resolve_data_path(input_file)  # a missing input: named, one line
            if Path(output_file_path).exists() and os.path.samefile(input_file,
                                                                    output_file_path):
                raise DataError(f"{output_file_path}: the input itself; write the vectors to "
                                f"another file")
            sentences = [line.strip() for line in text_lines(input_file)]
        elif hasattr(input_file, "__iter__") and hasattr(input_file, "__enter__"):
            sentences = self._read_lines(input_file)
        else:
            raise DataError(f"input_file must be a path or an open text file, got "
                            f"{input_file!r}")
        blank = [i for i, line in enumerate(sentences) if not line]
        if blank:
            raise DataError(f"the input file has empty lines at indexes {blank[:10]}"
                            f"{' ...' if len(blank) > 10 else ''}: remove them")
        if use_sentence_keys:
            first: dict[str, int] = {}
            for index, sentence in enumerate(sentences):
                problem = sentence_key_problem(sentence)
                if problem:
                    raise DataError(f"sentence {index} ({sentence[:40]!r}) cannot be a key: "
                                    f"{problem}; without use_sentence_keys any sentence can be "
                                    f"embedded")
                if first.setdefault(sentence, index) != index:
                    raise DataError(f"sentence {index} repeats an earlier one: without "
                                    f"use_sentence_keys duplicates can be embedded")
        vectors = self.embed_sentences((s.split() for s in sentences), batch_size)

        def write(tmp: str) -> None:
            sentence_to_index: dict[str, str] = {}
            with HDF5Output(tmp) as out:
                for index, (sentence, layers) in enumerate(zip(sentences, vectors,
                                                               strict=True)):
                    key = sentence if use_sentence_keys else str(index)
                    if not forget_sentences and not use_sentence_keys:
                        sentence_to_index[sentence] = key
                    data = {"all": layers, "top": layers[-1],
                            "average": np.average(layers, axis=0)}[output_format]
                    out.file.create_dataset(key, data.shape, dtype="float32", data=data)
                    out.check()
                if not forget_sentences and not use_sentence_keys:
                    index_dataset = out.file.create_dataset(
                        "sentence_to_index", (1,), dtype=h5py.string_dtype(encoding="utf-8"))
                    index_dataset[0] = json.dumps(sentence_to_index)

        atomic_write(output_file_path, write)

    @staticmethod
    def _read_lines(handle: IO[str]) -> list[str]:
        """The stripped lines of an open text file, which is then closed; text it cannot decode
        is a ``DataError`` naming the file."""
        sentences: list[str] = []
        if getattr(handle, "closed", False):
            raise DataError(f"{getattr(handle, 'name', 'the input file')}: the file is closed; "
                            f"pass it open, or pass its path")
        with handle:
            try:
                sentences.extend(line.strip() for line in handle)
            except UnicodeDecodeError as error:
                name = getattr(handle, "name", "the input file")
                raise DataError(f"{name}: not {error.encoding} text, at line "
                                f"{len(sentences) + 1} or after it ({error.reason})") from None
        return sentences
