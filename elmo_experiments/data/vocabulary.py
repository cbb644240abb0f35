"""A vocabulary of namespaces (tokens, characters, labels), saved in the run directory."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from elmo_experiments.data.files import (
    read_json,
    read_lines,
    sha1_of,
    staged_folder,
    write_lines,
)
from elmo_experiments.errors import DataError
from elmo_experiments.faults import fault_point

PADDING = "@@PADDING@@"
OOV = "@@UNKNOWN@@"


def is_padded(namespace: str) -> bool:
    """Label namespaces (``*labels``, ``*tags``) have no padding or OOV entries."""
    return not namespace.endswith(("labels", "tags"))


class Vocabulary:
    """Maps strings to ids per namespace; padded namespaces reserve 0 (padding) and 1 (OOV)."""

    def __init__(self) -> None:
        self._token_to_index: dict[str, dict[str, int]] = {}
        self._index_to_token: dict[str, list[str]] = {}

    def _ensure(self, namespace: str) -> None:
        if namespace not in self._index_to_token:
            tokens = [PADDING, OOV] if is_padded(namespace) else []
            self._index_to_token[namespace] = tokens
            self._token_to_index[namespace] = {t: i for i, t in enumerate(tokens)}

    def add(self, namespace: str, token: str) -> int:
        self._ensure(namespace)
        index = self._token_to_index[namespace].get(token)
        if index is None:
            index = len(self._index_to_token[namespace])
            self._index_to_token[namespace].append(token)
            self._token_to_index[namespace][token] = index
        return index

    @classmethod
    def from_counts(
        cls,
        counts: dict[str, Counter[str]],
        min_count: dict[str, int] | None = None,
        max_size: dict[str, int] | None = None,
    ) -> Vocabulary:
        """Keep items seen ``min_count[ns]`` times or more, most frequent first, ties by string."""
        vocab = cls()
        for namespace in sorted(counts):
            vocab._ensure(namespace)
            threshold = (min_count or {}).get(namespace, 1)
            ranked = sorted(counts[namespace].items(), key=lambda item: (-item[1], item[0]))
            kept = [token for token, count in ranked if count >= threshold]
            limit = (max_size or {}).get(namespace)
            for token in kept[:limit] if limit else kept:
                vocab.add(namespace, token)
        return vocab

    def namespaces(self) -> list[str]:
        return sorted(self._index_to_token)

    def size(self, namespace: str) -> int:
        self._ensure(namespace)
        return len(self._index_to_token[namespace])

    def index(self, namespace: str, token: str) -> int:
        """The id of ``token``; OOV for unknown tokens of padded namespaces."""
        table = self._token_to_index.get(namespace, {})
        found = table.get(token)
        if found is not None:
            return found
        if is_padded(namespace):
            return 1
        raise DataError(f"label {token!r} is not in vocabulary namespace {namespace!r}")

    def token(self, namespace: str, index: int) -> str:
        return self._index_to_token[namespace][index]

    def tokens(self, namespace: str) -> list[str]:
        self._ensure(namespace)
        return list(self._index_to_token[namespace])

    def save(self, directory: str | Path) -> None:
        """Write every namespace into a temporary folder beside ``directory``, then rename it
        into place: a saved vocabulary is complete or absent, never half written."""
        with staged_folder(Path(directory)) as staging:
            for namespace, tokens in self._index_to_token.items():
                write_lines(staging / f"{namespace}.txt", tokens)
            write_lines(staging / "namespaces.json", [json.dumps(sorted(self._index_to_token))])
            fault_point("vocabulary:staged")

    @staticmethod
    def digest(directory: str | Path) -> str:
        """SHA-1 of a saved vocabulary's files (what checkpoints record it by)."""
        return sha1_of(*sorted(p for p in Path(directory).iterdir() if p.is_file()))

    @classmethod
    def load(cls, directory: str | Path) -> Vocabulary:
        directory = Path(directory)
        listing = directory / "namespaces.json"
        if not listing.is_file():
            raise DataError(f"{directory}: not a saved vocabulary (no namespaces.json)")
        vocab = cls()
        namespaces = read_json(listing, list)
        if not all(isinstance(n, str) and n and "/" not in n for n in namespaces):
            raise DataError(f"{listing}: expected a list of namespace names; the file is damaged")
        for namespace in namespaces:
            tokens = read_lines(directory / f"{namespace}.txt")
            vocab._index_to_token[namespace] = tokens
            vocab._token_to_index[namespace] = {t: i for i, t in enumerate(tokens)}
        return vocab
