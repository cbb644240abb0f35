"""SemCor 3.0 tagfiles (``brown1``, ``brown2``: every content word; ``brownv``: verbs only).

Lines are SGML-like, read with regular expressions: ``<s snum=N>`` opens a sentence, ``</s>``
closes it, ``<wf cmd=done pos=NN lemma=group wnsn=1 lexsn=1:14:00::>group</wf>`` is a word
(tagged when it has ``lemma`` and ``lexsn``), ``<punc>,</punc>`` punctuation. A word's sense
key is ``lemma%lexsn``; ``lexsn`` may list several senses (``1:28:02::;1:28:01::``). Words of a
multiword expression are joined by ``_`` (``took_place``) and become separate tokens here.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from elmo_experiments.errors import DataError
from elmo_experiments.probing.senses import Annotation, Sentence, key_lemma_pos, normalise_key

SEMCOR = "wsd/semcor3.0.tar.gz"
_SENTENCE = re.compile(r"<s\s+snum=([^\s>]+)[^>]*>")
_WORD = re.compile(r"<(wf|punc)([^>]*)>([^<]*)</\1>")
_ATTRIBUTE = re.compile(r"(\w+)=([^\s>]+)")


def parse_tagfile(lines: Iterable[str], name: str) -> Iterator[Sentence]:
    """The sentences of one tagfile (``name`` prefixes their ids: ``br-a01.s1``)."""
    sentence: Sentence | None = None
    for line in lines:
        opened = _SENTENCE.search(line)
        if opened:
            sentence = Sentence(f"{name}.s{opened.group(1)}", [])
            continue
        if line.startswith("</s>"):
            if sentence is not None and sentence.tokens:
                yield sentence
            sentence = None
            continue
        word = _WORD.search(line)
        if word is None or sentence is None:
            continue
        kind, attributes, text = word.groups()
        words = [w for w in text.split("_") if w] or [text or "_"]
        start = len(sentence.tokens)
        sentence.tokens.extend(words)
        if kind != "wf":
            continue
        values = dict(_ATTRIBUTE.findall(attributes))
        if "lemma" not in values or "lexsn" not in values:
            continue
        lemma = values["lemma"].lower()
        keys = tuple(normalise_key(f"{lemma}%{lexsn}")
                     for lexsn in values["lexsn"].split(";") if lexsn)
        try:
            _, pos = key_lemma_pos(keys[0])
        except (ValueError, IndexError):
            continue
        sentence.annotations.append(Annotation(start, len(sentence.tokens), lemma, pos, keys))
    if sentence is not None and sentence.tokens:
        yield sentence


def read_semcor(path: str | Path) -> list[Sentence]:
    """Every sentence of the tagfiles (``*/tagfiles/*``) in a SemCor tar.gz, in name order."""
    sentences: list[Sentence] = []
    try:
        with tarfile.open(path, "r:*") as archive:
            members = sorted((m for m in archive.getmembers()
                              if m.isfile() and "/tagfiles/" in m.name), key=lambda m: m.name)
            if not members:
                raise DataError(f"{path}: no */tagfiles/* files (not SemCor 3.0?)")
            for member in members:
                handle = archive.extractfile(member)
                assert handle is not None
                text = handle.read().decode("utf-8", errors="replace")
                parts = member.name.split("/")
                name = f"{parts[-3]}/{parts[-1]}" if len(parts) >= 3 else parts[-1]
                sentences.extend(parse_tagfile(text.splitlines(), name))
    except (OSError, tarfile.TarError) as error:
        raise DataError(f"{path}: cannot read the SemCor archive ({error})") from None
    return sentences
