"""Chunk tag schemes (IOB1, BIO, BIOUL): conversion and CRF transition constraints.

Decoding follows conlleval.pl: ``B-X`` always starts a chunk; ``I-X`` (and ``L-X``)
continues a chunk only when the previous tag is ``B-X`` or ``I-X`` of the same type,
otherwise it starts a new one; ``L``/``U`` (aliases ``E``/``S``) close the chunk they are in.
So a BIO sequence with an ``I-X`` after ``O`` is read leniently, exactly as conlleval reads it.
"""

from __future__ import annotations

from elmo_experiments.errors import ConfigValueError

SCHEMES = ("IOB1", "BIO", "BIOUL")
_PREFIXES = {
    "IOB1": frozenset("BI"),
    "BIO": frozenset("BI"),
    "BIOUL": frozenset("BILUES"),
}
_ALIASES = {"E": "L", "S": "U"}

Span = tuple[str, int, int]  # (type, first index, last index)


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ConfigValueError(f"unknown tag scheme {scheme!r}; expected one of "
                               f"{', '.join(SCHEMES)}")


def _parse(tag: str, where: str, scheme: str) -> tuple[str, str]:
    """``(prefix, type)`` of one tag, with E/S normalised to L/U; ``("O", "")`` for ``O``."""
    if tag == "O":
        return "O", ""
    prefix, sep, label = tag.partition("-")
    if not sep or not label or prefix not in _PREFIXES[scheme]:
        allowed = "/".join(sorted(_PREFIXES[scheme]))
        raise ValueError(
            f"malformed {scheme} tag {tag!r} at {where}: expected 'O' or PREFIX-TYPE "
            f"with PREFIX in {allowed}"
        )
    return _ALIASES.get(prefix, prefix), label


def tags_to_spans(tags: list[str], scheme: str) -> list[Span]:
    """Chunks of a tag sequence as ``(type, first, last)`` in order (conlleval semantics)."""
    _check_scheme(scheme)
    spans: list[Span] = []
    prev_prefix, prev_label = "O", ""
    for i, tag in enumerate(tags):
        prefix, label = _parse(tag, f"position {i}", scheme)
        if prefix != "O":
            continues = prefix in ("I", "L") and prev_prefix in ("B", "I") and prev_label == label
            if continues:
                spans[-1] = (label, spans[-1][1], i)
            else:
                spans.append((label, i, i))
        prev_prefix, prev_label = prefix, label
    return spans


def spans_to_tags(spans: list[Span], length: int, scheme: str) -> list[str]:
    """Encode non-overlapping ordered spans as a tag sequence of ``length`` in ``scheme``."""
    _check_scheme(scheme)
    tags = ["O"] * length
    previous: Span | None = None
    for label, first, last in spans:
        if scheme == "BIOUL":
            if first == last:
                tags[first] = f"U-{label}"
            else:
                tags[first] = f"B-{label}"
                tags[first + 1 : last] = [f"I-{label}"] * (last - first - 1)
                tags[last] = f"L-{label}"
        else:
            tags[first : last + 1] = [f"I-{label}"] * (last - first + 1)
            adjacent = previous is not None and previous[0] == label and previous[2] == first - 1
            if scheme == "BIO" or adjacent:
                tags[first] = f"B-{label}"
        previous = (label, first, last)
    return tags


def convert_tags(tags: list[str], source: str, target: str) -> list[str]:
    """Re-encode ``tags`` from ``source`` to ``target`` scheme (validated copy when equal)."""
    _check_scheme(target)
    spans = tags_to_spans(tags, source)
    if source == target:
        return list(tags)
    return spans_to_tags(spans, len(tags), target)


def iob1_to_bio(tags: list[str]) -> list[str]:
    """IOB1 (B only between adjacent same-type chunks) to BIO (B at every chunk start)."""
    return convert_tags(tags, "IOB1", "BIO")


def bio_to_bioul(tags: list[str]) -> list[str]:
    """BIO to BIOUL (U for single-token chunks, L for chunk ends)."""
    return convert_tags(tags, "BIO", "BIOUL")


def iob1_to_bioul(tags: list[str]) -> list[str]:
    """IOB1 to BIOUL."""
    return convert_tags(tags, "IOB1", "BIOUL")


def bioul_to_bio(tags: list[str]) -> list[str]:
    """BIOUL (also accepts BIOES's E/S) to BIO."""
    return convert_tags(tags, "BIOUL", "BIO")


def _allowed(scheme: str, source: tuple[str, str], target: tuple[str, str]) -> bool:
    (from_prefix, from_label), (to_prefix, to_label) = source, target
    if scheme == "BIO":
        if to_prefix == "I":
            return from_prefix in ("B", "I") and from_label == to_label
        return True
    if scheme == "IOB1":
        if to_prefix == "B":
            return from_prefix in ("B", "I") and from_label == to_label
        return True
    if from_prefix in ("B", "I"):
        return to_prefix in ("I", "L") and from_label == to_label
    return to_prefix in ("O", "B", "U", "END")


def allowed_transitions(scheme: str, labels: dict[int, str]) -> list[tuple[int, int]]:
    """Allowed ``(from, to)`` label-id pairs for a CRF; ``len(labels)`` is START, +1 is END."""
    _check_scheme(scheme)
    n = len(labels)
    if sorted(labels) != list(range(n)):
        raise ValueError(f"label ids must be 0..{n - 1}, got {sorted(labels)}")
    parsed = {i: _parse(tag, f"label id {i}", scheme) for i, tag in labels.items()}
    sources = [*sorted(parsed.items()), (n, ("START", ""))]
    targets = [*sorted(parsed.items()), (n + 1, ("END", ""))]
    return [
        (i, j) for i, source in sources for j, target in targets if _allowed(scheme, source, target)
    ]
