"""The language of raw text: spaCy's rule-based tokeniser and sentencizer for a language code.

``spacy.blank(code)`` needs no model download: every language spaCy ships rules for works (``en``,
``de``, ``es``, ``fr``, ..., ``xx`` for text in several languages). The pretraining corpus's raw
sources, the task readers that read raw text and ``elmo-exp predict --text`` take the code as
``language`` (default ``en``); an unknown code is a one-line error naming it.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Any

from elmo_experiments.config.registry import Param
from elmo_experiments.errors import ConfigError

DEFAULT_LANGUAGE = "en"


def language_problem(code: Any) -> str | None:
    """What is wrong with a language code (a ``Param.check``), or None."""
    if code == DEFAULT_LANGUAGE or not isinstance(code, str):
        return None  # the type check names a non-string
    found = bool(code) and code.isascii() and code.replace("_", "").isalnum() and \
        importlib.util.find_spec(f"spacy.lang.{code}") is not None
    if found:
        return None
    return (f"unknown language code {code!r}: spaCy has no rules for it (give an ISO 639-1 code "
            f"such as en, de, es, fr, or xx for several languages)")


LANGUAGE_PARAM = Param("language", str, DEFAULT_LANGUAGE, check=language_problem,
                       doc="raw text's language (spaCy's rules: en, de, es, fr, ..., xx)")


@lru_cache(maxsize=8)
def pipeline(language: str = DEFAULT_LANGUAGE) -> Any:
    """spaCy's blank pipeline for ``language`` with its rule-based sentencizer; an unknown
    code is a one-line ``ConfigError``."""
    problem = language_problem(language)
    if problem is not None:
        raise ConfigError([problem], source="language")
    import spacy

    nlp = spacy.blank(language)
    nlp.add_pipe("sentencizer")
    return nlp


def language_of(reader: Any, override: str | None = None) -> str:
    """The language raw text for ``reader`` is in: ``override`` (``predict --language``), else
    the reader's own ``language`` setting, else English."""
    return override or getattr(reader, "language", None) or DEFAULT_LANGUAGE
