"""WordNet 3.0 through nltk's corpus reader, over Debian's ``wordnet-base`` files, and the
first-sense baseline.

Debian installs the database in ``/usr/share/wordnet`` (``index.noun``, ``data.noun``, ...,
``*.exc``) without the ``lexnames`` file nltk's reader opens first. That file is WordNet's fixed
list of 45 lexicographer files (lexnames(5WN)); ``_Reader`` serves it from ``LEXNAMES`` when
the directory lacks it, and skips nltk's mapping onto its own downloaded WordNet (``map_wn``,
which would look for ``nltk_data``). Nothing is downloaded.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any, Protocol

from elmo_experiments.errors import DataError

DEFAULT_DIR = Path("/usr/share/wordnet")
REQUIRED = tuple(f"{kind}.{pos}" for kind in ("index", "data") for pos in
                 ("noun", "verb", "adj", "adv"))
INSTALL_HINT = "install Debian's wordnet-base (apt-get install wordnet-base) or pass --wordnet DIR"
NLTK_POS = {"n": "n", "v": "v", "a": "a", "r": "r"}

# WordNet 3.0's lexicographer files, numbered as in lexnames(5WN).
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance",
    "noun.time", "verb.body", "verb.change", "verb.cognition", "verb.communication",
    "verb.competition", "verb.consumption", "verb.contact", "verb.creation", "verb.emotion",
    "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)
LEX_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}  # lexnames' third column


class Lexicon(Protocol):
    """What the first-sense baseline needs of a WordNet: ``lemmas(name, pos)`` in sense order,
    each with ``key()`` and ``name()`` (nltk's reader; tests pass a small fake)."""

    def lemmas(self, lemma: str, pos: str) -> list[Any]: ...


def wordnet_problem(root: str | Path | None = None) -> str | None:
    """Why WordNet cannot be read from ``root`` (default ``DEFAULT_DIR``), or None."""
    folder = Path(root) if root is not None else DEFAULT_DIR
    try:
        import nltk  # noqa: F401
    except ImportError:
        return "nltk is not installed (pip install 'elmo-experiments[probe]')"
    missing = [name for name in REQUIRED if not (folder / name).is_file()]
    if missing:
        return f"no WordNet 3.0 database in {folder} (missing {', '.join(missing)}): {INSTALL_HINT}"
    return None


def load_wordnet(root: str | Path | None = None) -> Any:
    """nltk's ``WordNetCorpusReader`` over ``root``; a ``DataError`` saying why it cannot."""
    problem = wordnet_problem(root)
    if problem:
        raise DataError(problem)
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    folder = str((Path(root) if root is not None else DEFAULT_DIR).resolve())
    if folder not in nltk.data.path:
        nltk.data.path.append(folder)  # nltk reads only below its data paths

    class _Reader(WordNetCorpusReader):
        def open(self, file: str) -> Any:  # type: ignore[override]
            if file == "lexnames" and not (Path(folder) / "lexnames").is_file():
                lines = "".join(f"{i:02d}\t{name}\t{LEX_CATEGORY[name.split('.')[0]]}\n"
                                for i, name in enumerate(LEXNAMES))
                return io.StringIO(lines)
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            return None  # this is WordNet 3.0 itself: no mapping from nltk's own copy

    with warnings.catch_warnings():  # "multilingual functions are not available": none needed
        warnings.simplefilter("ignore", UserWarning)
        return _Reader(folder, None)


class FirstSense:
    """WordNet's first (most frequent) sense key of a lemma and pos, or None if it has none."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self._cache: dict[tuple[str, str], str | None] = {}

    def __call__(self, lemma: str, pos: str) -> str | None:
        cached = (lemma, pos)
        if cached not in self._cache:
            self._cache[cached] = self._lookup(lemma, pos)
        return self._cache[cached]

    def _lookup(self, lemma: str, pos: str) -> str | None:
        if pos not in NLTK_POS:
            return None
        name = lemma.lower().replace(" ", "_")
        for candidate in self.lexicon.lemmas(name, NLTK_POS[pos]):
            if candidate.name().lower() == name:
                return str(candidate.key()).lower()
        return None
