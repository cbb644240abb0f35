"""spaCy pipeline components, registered through the ``spacy_factories`` entry point (and on
import of this module):

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")                                 # the shipped 'gutenberg' biLM, offline
    nlp.add_pipe("elmo_tagger", config={"archive": "runs/ner/model.tar.gz"})

- ``elmo`` sets ``doc.tensor`` (tokens x dim) and so every token's ``vector`` (a span's and the
  doc's: their tokens' mean) from the biLM: a ``mix`` (one weight per layer, times ``gamma``),
  the ``layers`` named (concatenated), or by default the average of all layers. The vectors
  are ``ElmoEmbedder``'s (and ``elmo-exp embed``'s) for the doc's tokens; ``nlp.pipe`` embeds
  ``batch_size`` docs at a time.
- ``elmo_tagger`` applies a trained model (``archive``: a model.tar.gz or a run directory) by
  its task, whose folder's ``serving`` registration reads and annotates the doc: NER sets
  ``doc.ents`` (each entity's probability in ``span._.elmo_score`` and the ``elmo_ents`` span
  group's ``attrs["scores"]``); SRL one span group per predicate (``srl_0``, ``srl_1``, ...:
  the ``V`` span then its arguments, labelled by role); coreference one span group per cluster
  (``coref_clusters_1``, ...); SST-5 ``doc.cats``. Sentences are the doc's (``doc.sents`` where
  a sentencizer or parser set them), else the whole doc.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from elmo_experiments import components
from elmo_experiments.bilm.elmo_embedder_compat import DEFAULT_WEIGHTS, ElmoEmbedder

components.load()  # spaCy's entry point into the package: every component registered

if not Span.has_extension("elmo_score"):
    Span.set_extension("elmo_score", default=None)


def _mean(rows: np.ndarray) -> np.ndarray:
    """The rows' average; zeros of the width for no rows (as spaCy gives an empty doc), never
    the NaN of an empty mean."""
    if not len(rows):
        return np.zeros(rows.shape[1:], dtype=np.float32)
    return rows.mean(axis=0)


def _span_vector(span: Span) -> np.ndarray:
    return _mean(span.doc.tensor[[t.i for t in span if not t.is_space]])


def _doc_vector(doc: Doc) -> np.ndarray:
    return _mean(doc.tensor[[t.i for t in doc if not t.is_space]])


def _batch_size(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}: batch_size must be a positive integer, got {value!r}")
    return value


def _token_vector(token: Any) -> np.ndarray:
    return token.doc.tensor[token.i]


class ElmoComponent:
    """Sets ``doc.tensor`` and token vectors from a biLM (see the module's docstring)."""

    def __init__(self, name: str, weights: str, layers: list[int] | None,
                 mix: list[float] | None, gamma: float, batch_size: int, device: int,
                 threads: int | None = None) -> None:
        self.name = name
        self.embedder = ElmoEmbedder(weights=weights, cuda_device=device, threads=threads)
        count = self.embedder.num_layers
        if mix is not None and (layers is not None or len(mix) != count):
            raise ValueError(f"{name}: mix needs one weight per layer ({count}) and no layers")
        if layers is not None and (not layers or any(not 0 <= i < count for i in layers)):
            raise ValueError(f"{name}: layers must be layer indices 0 to {count - 1}")
        self.layers = layers
        with np.errstate(over="ignore"):
            self.mix = None if mix is None else np.asarray(mix, dtype=np.float32)
            self.gamma = np.float32(gamma)
        if not np.isfinite(self.gamma) or (self.mix is not None and not np.isfinite(
                self.mix).all()):
            raise ValueError(f"{name}: mix and gamma must be finite float32 numbers, got "
                             f"mix {mix} and gamma {gamma}")
        if mix is None and gamma != 1.0:
            raise ValueError(f"{name}: gamma scales a mix: give mix too, or leave gamma out")
        self.batch_size = _batch_size(name, batch_size)

    @property
    def dim(self) -> int:
        """The width of each token's vector."""
        if self.layers is not None:
            return self.embedder.dim * len(self.layers)
        return self.embedder.dim

    def vectors(self, layers: np.ndarray) -> np.ndarray:
        """(layers, tokens, dim) -> (tokens, width) as configured."""
        if self.mix is not None:
            with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                mixed = float(self.gamma) * np.tensordot(self.mix, layers, axes=1)
            if not np.isfinite(mixed).all():
                raise ValueError(f"{self.name}: the mixed vectors overflow float32: mix (times "
                                 f"gamma) too large")
            return mixed
        if self.layers is not None:
            return np.concatenate([layers[i] for i in self.layers], axis=-1)
        return layers.mean(axis=0)

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc])))

    def pipe(self, docs: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        """Each doc's words through the biLM, as ``ElmoEmbedder`` embeds them: whitespace
        tokens are left out of its input and get zero vectors (doc and span vectors average
        the words)."""
        size = self.batch_size if batch_size is None else _batch_size(self.name, batch_size)
        for batch in minibatch(docs, size=size):
            words = [[t.i for t in doc if not t.is_space] for doc in batch]
            arrays = self.embedder.embed_batch([[doc[i].text for i in kept]
                                                for doc, kept in zip(batch, words, strict=True)])
            for doc, kept, layers in zip(batch, words, arrays, strict=True):
                tensor = np.zeros((len(doc), self.dim), dtype=np.float32)
                if kept:
                    tensor[kept] = self.vectors(layers)
                doc.tensor = tensor
                doc.user_token_hooks["vector"] = _token_vector
                doc.user_span_hooks["vector"] = _span_vector
                doc.user_hooks["vector"] = _doc_vector
                yield doc


@Language.factory("elmo", default_config={"weights": DEFAULT_WEIGHTS, "layers": None,
                                          "mix": None, "gamma": 1.0, "batch_size": 32,
                                          "device": -1, "threads": None})
def make_elmo(nlp: Language, name: str, weights: str, layers: list[int] | None,
              mix: list[float] | None, gamma: float, batch_size: int,
              device: int, threads: int | None) -> ElmoComponent:
    """The ``elmo`` component: biLM vectors for every token (``device`` -1: the CPU;
    ``threads``: torch's compute threads for the process, None leaves them as they are)."""
    return ElmoComponent(name, weights, layers, mix, gamma, batch_size, device, threads)


class ElmoTagger:
    """Applies a trained model's predictions to docs (see the module's docstring)."""

    def __init__(self, name: str, archive: str, batch_size: int, device: str) -> None:
        from elmo_experiments.serve.models import Limits, ServedModel

        self.name = name
        self.model = ServedModel(name, archive, device)
        serving = self.model.serving
        if serving is None or serving.doc_items is None or serving.annotate is None:
            raise ValueError(f"{name}: a {self.model.task} model reads pairs of texts, not "
                             f"one doc")
        self.serving = serving
        self.limits = Limits(max_items=10**6, max_chars=10**9, max_tokens=10**6,
                             max_token_chars=10**9)  # a doc is not a request: no size limits
        self.batch_size = _batch_size(name, batch_size)

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc])))

    def pipe(self, docs: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        size = self.batch_size if batch_size is None else _batch_size(self.name, batch_size)
        for batch in minibatch(docs, size=size):
            yield from self._apply(list(batch))

    def _apply(self, docs: list[Doc]) -> list[Doc]:
        """Every doc's model inputs (the task's ``doc_items``) predicted together, then each
        doc annotated by the task (``annotate``) from its parts' records."""
        owners: list[tuple[int, list[int]]] = []  # (doc, the doc's token indices) per input
        items: list[dict[str, Any]] = []
        for d, doc in enumerate(docs):
            for item, kept in self.serving.doc_items(doc):
                spaced = next((i for i in kept if any(c.isspace() for c in doc[i].text)), None)
                if spaced is not None:
                    raise ValueError(f"{self.name}: token {spaced} {doc[spaced].text!r} holds a "
                                     f"space (a merged span?), and a {self.model.task} model "
                                     f"takes tokens without spaces: split it, or embed such "
                                     f"docs with the elmo component")
                items.append(item)
                owners.append((d, kept))
        results = self.model.predict({"instances": items}, self.limits)["results"] \
            if items else []
        parts: list[list[tuple[list[int], list[dict[str, Any]]]]] = [[] for _ in docs]
        for (d, kept), records in zip(owners, results, strict=True):
            parts[d].append((kept, records))
        for doc, found in zip(docs, parts, strict=True):
            self.serving.annotate(doc, found)
        return docs


@Language.factory("elmo_tagger", default_config={"archive": "", "batch_size": 16,
                                                 "device": "cpu", "threads": None})
def make_elmo_tagger(nlp: Language, name: str, archive: str, batch_size: int,
                     device: str, threads: int | None) -> ElmoTagger:
    """The ``elmo_tagger`` component: a trained model (``archive``) applied to each doc
    (``threads``: torch's compute threads for the process, None leaves them as they are)."""
    if threads is not None:
        from elmo_experiments.threads import set_threads

        set_threads(threads)
    if not archive:
        raise ValueError(f"{name}: set config={{'archive': 'PATH/model.tar.gz'}}")
    return ElmoTagger(name, archive, batch_size, device)
