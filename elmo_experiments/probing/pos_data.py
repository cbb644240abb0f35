"""POS data for the probe: CoNLL-U treebanks (UD EWT) and NLTK's Penn Treebank sample zip.

The PTB sample (WSJ files wsj_0001..wsj_0199) has no standard split; ours is by file id:
wsj_0001-0159 train, wsj_0160-0179 dev, wsj_0180-0199 test. ``-NONE-`` empty elements are
dropped.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from elmo_experiments.data.files import resolve_data_path
from elmo_experiments.data.readers.conllu import FORM, UPOS, XPOS, iter_conllu
from elmo_experiments.errors import DataError

Tagged = list[tuple[list[str], list[str]]]  # sentences: (tokens, tags)

TAGSETS = {"upos": UPOS, "xpos": XPOS}  # CoNLL-U column of each tag set
UD_EWT = "pos/ud_english_ewt/en_ewt-ud-{split}.conllu"
PTB_SAMPLE = "pos/ptb_sample/treebank.zip"
PTB_SPLITS = {"train": (1, 159), "dev": (160, 179), "test": (180, 199)}  # wsj file numbers
DATASETS = ("ud_ewt", "ptb_sample")

_LEAF = re.compile(r"\(([^\s()]+) ([^\s()]+)\)")  # (TAG word)
_MRG = re.compile(r"(?:^|/)wsj_(\d{4})\.mrg$")


def read_conllu(path: str | Path, tagset: str = "xpos") -> Tagged:
    """(FORM, UPOS or XPOS) per sentence; multiword ``3-4`` and empty ``5.1`` lines skipped."""
    if tagset not in TAGSETS:
        raise DataError(f"tag set {tagset!r} is not one of {sorted(TAGSETS)}")
    column = TAGSETS[tagset]
    return [([fields[FORM] for fields in rows], [fields[column] for fields in rows])
            for rows in iter_conllu(resolve_data_path(path))]


def parse_mrg(text: str) -> Tagged:
    """(words, PTB tags) of each bracketed parse in ``text``, ``-NONE-`` leaves dropped."""
    sentences: Tagged = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "(":
            if depth == 0:
                start = index
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                leaves = [(w, t) for t, w in _LEAF.findall(text[start: index + 1])
                          if t != "-NONE-"]
                if leaves:
                    sentences.append(([w for w, _ in leaves], [t for _, t in leaves]))
    return sentences


def read_ptb_zip(path: str | Path, splits: dict[str, tuple[int, int]] | None = None
                 ) -> dict[str, Tagged]:
    """The ``combined/wsj_NNNN.mrg`` parses of an NLTK treebank zip, split by file number."""
    splits = splits or PTB_SPLITS
    result: dict[str, Tagged] = {name: [] for name in splits}
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: cannot read the treebank zip ({error})") from None
    with archive:
        names = sorted(n for n in archive.namelist() if _MRG.search(n))
        if not names:
            raise DataError(f"{path}: no combined/wsj_NNNN.mrg files")
        for name in names:
            number = int(_MRG.search(name).group(1))  # type: ignore[union-attr]
            for split, (low, high) in splits.items():
                if low <= number <= high:
                    result[split].extend(parse_mrg(archive.read(name).decode("utf-8")))
    return result


def load_pos(dataset: str, data_dir: str | Path, tagset: str = "xpos") -> dict[str, Tagged]:
    """``{"train", "dev", "test"}`` of ``ud_ewt`` (``tagset`` upos/xpos) or ``ptb_sample``."""
    root = Path(data_dir)
    if dataset == "ud_ewt":
        return {split: read_conllu(root / UD_EWT.format(split=split), tagset)
                for split in ("train", "dev", "test")}
    if dataset == "ptb_sample":
        if tagset != "xpos":
            raise DataError("ptb_sample has PTB tags only (--tagset xpos)")
        return read_ptb_zip(root / PTB_SAMPLE)
    raise DataError(f"POS data {dataset!r} is not one of {DATASETS}")
