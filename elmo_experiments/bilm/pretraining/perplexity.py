"""``elmo-exp perplexity``: exact-softmax perplexity of an exported biLM on a text.

The text is read and tokenised as pretraining reads it (``corpus.py`` formats; long sentences
cut into pieces of ``max_sentence_length``); a prepared corpus folder may be given instead,
with one of its splits (e.g. ``heldout``). Every word outside the biLM's softmax vocabulary is
one ``<UNK>`` prediction, as in pretraining.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.pretraining.corpus import PreparedCorpus, prepare_corpus
from elmo_experiments.bilm.pretraining.lm_data import (
    SOFTMAX_FILE,
    VOCAB_FILE,
    LmLoader,
    SoftmaxVocabulary,
)
from elmo_experiments.bilm.pretraining.lm_model import BilmLanguageModel
from elmo_experiments.bilm.weights import load_weights
from elmo_experiments.errors import DataError
from elmo_experiments.progress import progress
from elmo_experiments.training.evaluation import evaluate


def load_language_model(weights: str) -> tuple[BilmLanguageModel, SoftmaxVocabulary]:
    """The biLM of a directory or known name, with its softmax (exact) and vocabulary."""
    options_file, weight_file = resolve_weights(weights)
    folder = weight_file.parent
    for needed in (SOFTMAX_FILE, VOCAB_FILE):
        if not (folder / needed).is_file():
            raise DataError(f"{folder}: no {needed}; perplexity needs a biLM exported by "
                            "elmo-exp pretrain (softmax.hdf5 and vocab.txt beside the weights)")
    vocab = SoftmaxVocabulary.load(folder / VOCAB_FILE)
    model = BilmLanguageModel(BilmOptions.load(options_file), len(vocab), dropout=0.0)
    load_weights(model.bilm, weight_file)
    model.softmax.load_hdf5(folder / SOFTMAX_FILE)
    return model.eval(), vocab


class _Progress:
    """A loader that shows a progress bar over its batches."""

    def __init__(self, loader: LmLoader, show: bool) -> None:
        self.loader, self.show = loader, show

    def __len__(self) -> int:
        return len(self.loader)

    def batches(self, epoch: int) -> Iterator[dict[str, Any]]:
        yield from progress(self.loader.batches(epoch), total=len(self.loader), unit="batch",
                            enabled=self.show)


def perplexity(weights: str, text: str, fmt: str = "raw", split: str | None = None,
               max_sentence_length: int = 60, batch_size: int = 64,
               progress: bool = True, ext_vars: dict[str, str] | None = None,
               language: str = "en") -> dict[str, float]:
    """Forward, backward and average perplexity (exact softmax) and the token count.

    ``split``: of a prepared corpus folder (default ``heldout``); with ``fmt`` experiment, of
    the task config ``text`` (default ``validation``, its dev text). ``language``: the spaCy
    rules raw text is tokenised with."""
    model, vocab = load_language_model(weights)
    settings = {"batch_size": batch_size, "max_tokens": None, "batches_per_epoch": None,
                "max_eval_sentences": None}
    with tempfile.TemporaryDirectory() as folder:
        if Path(text).is_dir() and (Path(text) / "types.txt").is_file():
            corpus = PreparedCorpus.load(text)  # a prepared corpus: one of its splits
            split = split or "heldout"
        else:
            source = {"path": text, "format": fmt, "language": language}
            if fmt == "experiment":  # ext_vars: the task config's (e.g. ELMO_SIZE)
                source.update(split=split or "validation", ext_vars=ext_vars or {})
            elif split is not None:
                raise DataError(f"{text}: --split applies to a prepared corpus folder or to "
                                "--format experiment")
            split = "text"
            corpus = prepare_corpus([], {split: source}, folder,
                                    heldout_every=0, max_sentence_length=max_sentence_length)
        loader = LmLoader(corpus, split, vocab, settings, train=False)
        if not len(loader.spans):
            raise DataError(f"{text}: no sentences to score")
        tokens = int(sum(end - start for start, end in loader.spans))
        metrics = evaluate(model, _Progress(loader, progress))
    return {"perplexity_forward": metrics["perplexity_forward"],
            "perplexity_backward": metrics["perplexity_backward"],
            "perplexity": metrics["perplexity"], "tokens": tokens}
