"""Cutting held-out documents (e.g. LitBank's excerpts) out of raw training text.

A document is found in a text by its characters with all whitespace removed, so tokenisation
and line wrapping do not matter; what lies between the document's first and last character
is cut, and the cut becomes a paragraph break. Every document must be found exactly once in
the files of its source, otherwise preparation stops: a document that silently stayed in the
training text would leak a test set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from elmo_experiments.errors import DataError

_ANCHOR = 200  # characters of a document's start and end used to locate it


def _squeeze(text: str) -> tuple[str, list[int]]:
    """``text`` without whitespace, and the offset in ``text`` of each kept character."""
    offsets = [i for i, ch in enumerate(text) if not ch.isspace()]
    return "".join(text[i] for i in offsets), offsets


@dataclass
class Exclusions:
    """Documents to remove: name -> their words joined without spaces."""

    documents: dict[str, str]
    found: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (file, chars cut)

    @classmethod
    def from_conll2012(cls, files: list[Path]) -> Exclusions:
        from elmo_experiments.data.readers.conll2012_text import iter_documents

        documents = {}
        for file in files:
            for name, sentences in iter_documents(file):
                documents[name] = "".join(word for sentence in sentences for word in sentence)
        return cls(documents)

    def cut(self, text: str, source: str) -> str:
        """``text`` with every listed document that occurs in it removed."""
        squeezed, offsets = _squeeze(text)
        spans = []
        for name, words in self.documents.items():
            start = squeezed.find(words[:_ANCHOR])
            if start < 0:
                continue
            tail = words[-_ANCHOR:]
            end = squeezed.find(tail, start)
            if end < 0 or squeezed.find(words[:_ANCHOR], start + 1) >= 0:
                raise DataError(f"{source}: document {name!r} found but not as one unique "
                                "passage; cannot cut it out safely")
            if name in self.found:
                raise DataError(f"{source}: document {name!r} also occurs in "
                                f"{self.found[name][0]}")
            first, last = offsets[start], offsets[end + len(tail) - 1] + 1
            spans.append((first, last))
            self.found[name] = (source, last - first)
        for first, last in sorted(spans, reverse=True):
            text = text[:first] + "\n\n" + text[last:]
        return text

    def check_all_found(self, source: str) -> None:
        missing = sorted(set(self.documents) - set(self.found))
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            raise DataError(f"{source}: excluded documents not found in its text: "
                            f"{', '.join(missing[:3])}{more}")
