"""The answer alignment of ``reproduction/squad/README.md`` ("Measured on the files above"): for
each ``split_characters`` setting of its table, how many SQuAD v1.1 answers the ``squad`` reader
aligns exactly, inexactly or not at all in the train and dev files, and the figures of the
paragraph below the table.

    python reproduction/squad/alignment.py [--data-root DIR]
        [--out reproduction/squad/results/alignment.json]

``DIR`` (default ``$ELMO_DATA_DIR``) holds ``squad/train-v1.1.json`` and
``squad/dev-v1.1.json`` (or ``.json.gz``). Writes the JSON (with the date, the commit, spaCy's
version and the input files' SHA-256) and prints the README's table.

Each passage goes through spaCy once, with the reader's tokenizer; each setting's tokens are
made from those spaCy tokens by the splitting that ``tokenize_with_offsets`` applies to each of
them (``split_token``). Answers are located and aligned with the reader's own ``locate`` and
``Paragraph.span``. On dev the command checks both shortcuts before it writes anything: every
setting's passage tokens equal ``tokenize_with_offsets(context, split_characters)``, and the
default setting's counts equal what ``SquadReader(...).read()`` reports in ``alignment``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from elmo_experiments.data.files import (
    DATA_DIR_VARIABLE,
    load_data_json,
    resolve_data_path,
    sha256_of,
)
from elmo_experiments.data.tokenizers import spacy_words, split_token, tokenize_with_offsets
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.squad.reader import (
    SPLIT_CHARACTERS,
    Paragraph,
    SquadReader,
    _field,
    locate,
)
from elmo_experiments.training.run_dir import write_json
from elmo_experiments.version import code_version

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "reproduction" / "squad" / "results" / "alignment.json"
COMMAND = "python reproduction/squad/alignment.py"
SPLITS = ("train", "dev")

# The README table's rows, in its order: (name, split_characters).
SETTINGS: tuple[tuple[str, str], ...] = (
    ("none", ""),
    ("-–—", "-–—"),
    ("-–—/~", "-–—/~"),
    ('-–—/~"“”', '-–—/~"“”'),
    ('-–—/~"“”[]()', '-–—/~"“”[]()'),
    ("default", SPLIT_CHARACTERS),
    ("default+.", SPLIT_CHARACTERS + "."),
)
# What the reader's ``alignment`` holds that this command counts as well.
READER_KEYS = ("questions", "answers", "exact", "inexact", "not_found", "searched")

Token = tuple[str, int, int]


# --- tokens -------------------------------------------------------------------------------

def passage_tokens(words: Iterable[tuple[str, int]], split_characters: str) -> list[Token]:
    """The tokens ``tokenize_with_offsets(text, split_characters)`` gives, from ``text``'s
    ``spacy_words``."""
    return [token for word, start in words for token in split_token(word, start,
                                                                   split_characters)]


# --- counting -----------------------------------------------------------------------------

def occurrences(context: str, text: str) -> list[int]:
    """Every start of ``text`` in ``context``, overlapping ones included (as ``locate``
    searches)."""
    found, at = [], context.find(text)
    while at >= 0:
        found.append(at)
        at = context.find(text, at + 1)
    return found


def inside_word(context: str, at: int) -> bool:
    """Whether position ``at`` lies between two letters or digits."""
    return 0 < at < len(context) and context[at - 1].isalnum() and context[at].isalnum()


def new_counts() -> dict[str, int]:
    return dict.fromkeys(("answers", "exact", "inexact", "not_found", "searched", "tokens",
                          "inexact_inside_word", "inexact_exact_elsewhere"), 0)


def tally(paragraph: Paragraph, answers: Sequence[tuple[str, tuple[int, int] | None, bool]],
          counts: dict[str, int]) -> None:
    """Add one paragraph's answers (stripped text, ``locate``'s characters and whether they
    were searched for) to ``counts``, as the reader counts them; of the inexact ones, those
    that begin or end between two letters or digits, and those whose text also occurs
    elsewhere in the paragraph where it aligns exactly."""
    counts["tokens"] += len(paragraph.tokens)
    for text, characters, searched in answers:
        counts["answers"] += 1
        span, exact = paragraph.span(*characters) if characters else (None, False)
        if span is None or characters is None:  # as the reader: not in the context
            counts["not_found"] += 1
            continue
        counts["searched"] += searched
        if exact:
            counts["exact"] += 1
            continue
        counts["inexact"] += 1
        start, end = characters
        context = paragraph.context
        counts["inexact_inside_word"] += inside_word(context, start) or inside_word(context, end)
        counts["inexact_exact_elsewhere"] += any(
            paragraph.span(at, at + len(text))[1]
            for at in occurrences(context, text) if at != start)


def measure(path: Path, check: bool = False) -> dict[str, Any]:
    """The file's counts (articles, paragraphs, questions, answers, and answers whose text
    occurs more than once in its paragraph) and every setting's counts. With ``check``, every
    setting's passage tokens are compared with ``tokenize_with_offsets``'s (a ``DataError``
    if they differ)."""
    data = _field(load_data_json(path), "data", list, str(path))
    totals = dict.fromkeys(("articles", "paragraphs", "questions", "answers", "repeated"), 0)
    settings = {name: new_counts() for name, _ in SETTINGS}
    for number, article in enumerate(data, start=1):
        where = f"{path}: article {number}"
        totals["articles"] += 1
        for place, paragraph in enumerate(_field(article, "paragraphs", list, where), start=1):
            here = f"{where}, paragraph {place}"
            context = _field(paragraph, "context", str, here)
            answers = []
            for index, question in enumerate(_field(paragraph, "qas", list, here), start=1):
                there = f"{here}, question {index}"
                totals["questions"] += 1
                for answer in _field(question, "answers", list, there):
                    text = _field(answer, "text", str, there)
                    characters, searched = locate(
                        context, text, _field(answer, "answer_start", int, there))
                    answers.append((text.strip(), characters, searched))
                    if text.strip():
                        totals["repeated"] += len(occurrences(context, text.strip())) > 1
            totals["paragraphs"] += 1
            totals["answers"] += len(answers)
            words = spacy_words(context)
            for name, characters in SETTINGS:
                tokens = passage_tokens(words, characters)
                if check and tokens != tokenize_with_offsets(context, characters):
                    raise DataError(f"{here}: the tokens made from spaCy's differ from "
                                    f"tokenize_with_offsets's with split_characters "
                                    f"{characters!r}")
                tally(Paragraph(context, [t for t, _, _ in tokens],
                                [(s, e) for _, s, e in tokens]), answers, settings[name])
    return {"file": totals, "settings": settings}


def check_reader(path: Path, measured: dict[str, int], questions: int) -> dict[str, int]:
    """``SquadReader({}).read(path).alignment`` (the default ``split_characters``); a
    ``DataError`` unless it holds the same counts as ``measured``."""
    reader = SquadReader({})
    reader.read(path)
    ours = {key: questions if key == "questions" else measured[key] for key in READER_KEYS}
    theirs = {key: reader.alignment[key] for key in READER_KEYS}
    if ours != theirs:
        raise DataError(f"{path}: the reader's alignment {theirs} differs from this "
                        f"command's {ours}")
    return dict(reader.alignment)


# --- the report ---------------------------------------------------------------------------

def _cell(count: int, total: int, bold: bool) -> str:
    text = f"{count:,} ({100 * count / total:.2f}%)"
    return f"**{text}**" if bold else text


def label(name: str, characters: str) -> str:
    """A setting's first cell in the README's table."""
    if not characters:
        return "none (spaCy's tokens)"
    if name == "default":
        return f"**`{characters}` (default)**"
    if name == "default+.":
        return "the default and `.` (not used)"
    return f"`{characters}`"


def table(results: dict[str, Any]) -> str:
    """The README's table, from the results file's contents."""
    totals = {split: results["files"][split]["answers"] for split in SPLITS}
    lines = [f"| `split_characters` | train inexact (of {totals['train']:,}) "
             f"| dev inexact (of {totals['dev']:,}) |", "|---|---|---|"]
    for setting in results["settings"]:
        bold = setting["name"] == "default"
        cells = [label(setting["name"], setting["split_characters"]),
                 *(_cell(setting[split]["inexact"], totals[split], bold) for split in SPLITS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _inputs(root: Path) -> dict[str, Path]:
    """The train and dev files under ``root``; a one-line ``SystemExit`` if either is missing."""
    found = {}
    for split in SPLITS:
        path = root / "squad" / f"{split}-v1.1.json"
        try:
            found[split] = resolve_data_path(path)
        except DataError:
            raise SystemExit(f"alignment.py: no SQuAD v1.1 {split} file: {path}[.gz] does not "
                             f"exist (give --data-root DIR or set {DATA_DIR_VARIABLE}; "
                             f"`elmo-exp data download squad` fetches the files)") from None
    return found


def run(root: Path) -> dict[str, Any]:
    """Every number of the results file, measured on the files under ``root``."""
    began = time.monotonic()
    paths = _inputs(root)
    import spacy

    measured, reader = {}, {}
    for split in ("dev", "train"):  # dev first: its checks fail fast
        at = time.monotonic()
        measured[split] = measure(paths[split], check=split == "dev")
        if split == "dev":
            reader = check_reader(paths[split], measured[split]["settings"]["default"],
                                  measured[split]["file"]["questions"])
        print(f"{paths[split].name}: {time.monotonic() - at:.0f} s", file=sys.stderr)
    return {
        "command": COMMAND,
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "commit": code_version(),
        "spacy": spacy.__version__,
        "python": platform.python_version(),
        "inputs": {split: {"file": f"squad/{paths[split].name}",
                           "sha256": sha256_of(paths[split])} for split in SPLITS},
        "runtime_s": round(time.monotonic() - began, 1),
        "default_split_characters": SPLIT_CHARACTERS,
        "files": {split: measured[split]["file"] for split in SPLITS},
        "settings": [{"name": name, "split_characters": characters,
                      **{split: measured[split]["settings"][name] for split in SPLITS}}
                     for name, characters in SETTINGS],
        "checks": {
            "dev_tokens": "every setting's passage tokens equal tokenize_with_offsets's",
            "dev_reader_alignment": reader,
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, default=None,
                        help=f"the folder holding squad/ (default: ${DATA_DIR_VARIABLE})")
    parser.add_argument("--out", type=Path, default=OUT, help="the results file to write")
    args = parser.parse_args(argv)
    root = args.data_root or (Path(os.environ[DATA_DIR_VARIABLE])
                              if os.environ.get(DATA_DIR_VARIABLE) else None)
    if root is None:
        raise SystemExit(f"alignment.py: no data root: give --data-root DIR or set "
                         f"{DATA_DIR_VARIABLE} (DIR/squad/train-v1.1.json.gz and "
                         f"dev-v1.1.json.gz)")
    try:
        results = run(root)
    except DataError as error:
        raise SystemExit(f"alignment.py: {error}") from None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, results)
    print(table(results))


if __name__ == "__main__":
    main()
