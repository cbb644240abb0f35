"""Fetching the public data sets into ``$ELMO_DATA_DIR`` in the layout the configs read.

``DATASETS``: each set's sources or, licence-restricted, how to obtain it. ``download`` streams
to ``FILE.part`` (resumed by HTTP Range), checks the SHA-256 (pinned here where known, else
recorded in ``ROOT/.downloads.json`` at the first download), renames, then extracts. ``fetch``,
that download of one file with its progress, also fetches the released biLMs
(``bilm/pretrained.py``).
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import sys
import textwrap
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from elmo_experiments.config.registry import suggest
from elmo_experiments.data.files import (
    DATA_DIR_VARIABLE,
    atomic_write,
    atomic_write_text,
    fsync_path,
    sha256_of,
    staged_folder,
)
from elmo_experiments.errors import DataError
from elmo_experiments.progress import progress as progress_display

MANIFEST = ".downloads.json"
ARCHIVES = ".downloads"  # archives wait here until extracted, then are deleted
TIMEOUT = 60  # seconds without data before a download counts as failed
BLOCK = 1 << 20


@dataclass(frozen=True)
class Source:
    """One file to fetch. ``files``: (member, target) pairs, targets relative to the root;
    ``kind``: ``file`` (one target, member "") or ``zip`` (members extracted; a member ending
    in "/" is a folder, all its files extracted into the target folder). ``compress``: write
    the targets gzip-compressed (``.gz``; a served ``.gz`` file is best stored as is).
    ``sha256``: of the downloaded file, where known; None: recorded at the first download."""

    url: str
    files: tuple[tuple[str, str], ...]
    kind: str = "file"
    sha256: str | None = None
    compress: bool = False

    @property
    def as_is(self) -> bool:
        """Whether the download itself is the (only) target."""
        return self.kind == "file" and not self.compress


@dataclass(frozen=True)
class Dataset:
    """A data set: its licence, and its sources, or (none) the files to put and how to get them."""

    name: str
    title: str
    licence: str
    sources: tuple[Source, ...] = ()
    layout: tuple[str, ...] = ()  # not downloadable: the paths the configs read
    how: str = ""  # not downloadable: how to obtain it

    @property
    def downloadable(self) -> bool:
        return bool(self.sources)


def _raw(url: str, target: str, sha256: str | None = None) -> Source:
    return Source(url, (("", target),), "file", sha256)


_SQUAD = "https://rajpurkar.github.io/SQuAD-explorer/dataset"
_UD = "https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/r2.13"
_GAP = "https://raw.githubusercontent.com/google-research-datasets/gap-coreference/master"

DATASETS: dict[str, Dataset] = {d.name: d for d in [
    Dataset("squad", "SQuAD v1.1 (Rajpurkar et al. 2016)", "CC BY-SA 4.0", (
        _raw(f"{_SQUAD}/train-v1.1.json", "squad/train-v1.1.json",
             "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955"),
        _raw(f"{_SQUAD}/dev-v1.1.json", "squad/dev-v1.1.json",
             "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9"))),
    Dataset("snli", "SNLI 1.0 (Bowman et al. 2015)", "CC BY-SA 4.0", (
        Source("https://nlp.stanford.edu/projects/snli/snli_1.0.zip",
               tuple((f"snli_1.0/snli_1.0_{s}.jsonl", f"snli/snli_1.0_{s}.jsonl.gz")
                     for s in ("train", "dev", "test")), "zip",
               "afb3d70a5af5d8de0d9d81e2637e0fb8c22d1235c2749d83125ca43dab0dbd3e",
               compress=True),)),
    Dataset("sst5", "Stanford Sentiment Treebank, PTB trees (Socher et al. 2013)",
            "no explicit licence (research use)", (
        Source("https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip",
               tuple((f"trees/{s}.txt", f"sst/{s}.txt") for s in ("train", "dev", "test")),
               "zip", "5c613a4f673fc74097d523a2c83f38e0cc462984d847b82c7aaf36b01cbbbfcc"),)),
    Dataset("ud_ewt", "UD English EWT r2.13 (POS tagging)", "CC BY-SA 4.0", tuple(
        _raw(f"{_UD}/en_ewt-ud-{s}.conllu", f"pos/ud_english_ewt/en_ewt-ud-{s}.conllu")
        for s in ("train", "dev", "test"))),
    Dataset("litbank", "LitBank coreference (Bamman et al. 2020)", "CC BY 4.0", (
        Source("https://github.com/dbamman/litbank/archive/refs/heads/master.zip",
               (("litbank-master/coref/conll/", "coref_litbank/conll/"),), "zip"),)),
    Dataset("gap", "GAP gendered pronoun coreference (Webster et al. 2018)", "Apache-2.0", tuple(
        _raw(f"{_GAP}/gap-{s}.tsv", f"coref_gap/gap-{s}.tsv")
        for s in ("development", "validation", "test"))),
    Dataset("wsd", "WSD evaluation framework (Raganato et al. 2017), with SemCor",
            "no explicit licence (research use)", (
        Source("http://lcl.uniroma1.it/wsdeval/data/WSD_Evaluation_Framework.zip",
               (("WSD_Evaluation_Framework/", "wsd/"),), "zip"),)),
    Dataset("wikitext2", "WikiText-2 v1 (Merity et al. 2016)", "CC BY-SA", (
        Source("https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-v1.zip",
               tuple((f"wikitext-2/wiki.{s}.tokens", f"lm_corpus/wikitext2/wiki.{s}.tokens")
                     for s in ("train", "valid", "test")), "zip",
               "92675f1d63015c1c8b51f1656a52d5bdbc33aafa60cc47a218a66e7ee817488c"),)),
    Dataset("conll2003", "CoNLL-2003 English NER", "Reuters RCV1 agreement (not redistributable)",
            layout=("ner_conll2003/eng.train", "ner_conll2003/eng.testa",
                    "ner_conll2003/eng.testb"),
            how="request the Reuters Corpus (RCV1) from NIST "
                "(https://trec.nist.gov/data/reuters/reuters.html) and build the files with the "
                "CoNLL-2003 scripts (https://www.clips.uantwerpen.be/conll2003/ner/)"),
    Dataset("conll2005", "CoNLL-2005 semantic role labelling", "LDC (PropBank + Penn Treebank)",
            layout=tuple(f"srl_conll2005/{s}.gz"
                         for s in ("train-set", "dev-set", "test-wsj", "test-brown")),
            how="the words come from the Penn Treebank (LDC99T42, from the LDC): build the files "
                "with the CoNLL-2005 scripts (https://www.cs.upc.edu/~srlconll/)"),
    Dataset("ontonotes", "OntoNotes 5.0 / CoNLL-2012", "LDC (LDC2013T19)",
            layout=("conll2012/",),
            how="obtain OntoNotes 5.0 (LDC2013T19) from the LDC and build the *_gold_conll files "
                "with the CoNLL-2012 scripts (https://conll.cemantix.org/2012/data.html); no "
                "config reads them yet"),
    Dataset("ptb", "Penn Treebank, Mikolov's language-modelling version", "LDC (LDC99T42)",
            layout=tuple(f"lm_corpus/ptb/ptb.{s}.txt" for s in ("train", "valid", "test")),
            how="from the Penn Treebank (LDC99T42, from the LDC) with Mikolov's preprocessing "
                "(10k words, lower case, N for numbers, <unk>); .gz files work too"),
]}


def data_root(root: str | Path | None) -> Path:
    """``root``, else ``$ELMO_DATA_DIR``; a ``DataError`` if neither is given."""
    value = root or os.environ.get(DATA_DIR_VARIABLE)
    if not value:
        raise DataError(f"no data root: pass --root DIR or set {DATA_DIR_VARIABLE}")
    return Path(value).expanduser()


def lookup(name: str, table: dict[str, Dataset] | None = None) -> Dataset:
    """The data set called ``name``; unknown: a one-line error with a did-you-mean."""
    table = DATASETS if table is None else table
    if name not in table:
        raise DataError(f"unknown data set {name!r}{suggest(name, list(table))} "
                        f"(known: {', '.join(table)})")
    return table[name]


def listing(table: dict[str, Dataset] | None = None) -> str:
    """One line per data set: name, licence, whether it downloads, title."""
    table = DATASETS if table is None else table
    width = max(len(n) for n in table)
    return "\n".join(f"{d.name:<{width}}  {'download' if d.downloadable else 'manual  '}  "
                     f"{d.licence:<44}  {d.title}" for d in table.values())


def where(name: str, root: str | Path | None = None,
          table: dict[str, Dataset] | None = None) -> str:
    """For each file ``name`` needs: its full path under the root and how to obtain it."""
    dataset = lookup(name, table)
    value = root or os.environ.get(DATA_DIR_VARIABLE)
    base = Path(value).expanduser() if value else None
    lines = [f"{dataset.name}: {dataset.title}; licence: {dataset.licence}"]

    def path_line(relative: str) -> str:
        if base is None:
            return f"  ${DATA_DIR_VARIABLE}/{relative}"
        found = (base / relative).exists() or (base / f"{relative}.gz").exists()
        return f"  {base / relative}{'/' * relative.endswith('/')}  " \
               f"[{'present' if found else 'missing'}]"

    if dataset.downloadable:
        for source in dataset.sources:
            for member, target in source.files:
                lines.append(path_line(target))
                lines.append(f"      from {source.url}" + (f" ({member})" if member else ""))
        lines.append(f"  get them: elmo-exp data download {dataset.name}")
    else:
        lines.extend(path_line(relative) for relative in dataset.layout)
        lines.append(textwrap.fill(f"cannot be downloaded here: {dataset.how}", 100,
                                   initial_indent="  ", subsequent_indent="    ",
                                   break_long_words=False, break_on_hyphens=False))
    if base is None:
        lines.append(f"  ({DATA_DIR_VARIABLE} is not set: it names the data root)")
    return "\n".join(lines)


def to_stderr(message: str) -> None:
    """The default ``log`` of downloads: a line on stderr."""
    print(message, file=sys.stderr, flush=True)


def download(names: Iterable[str], root: str | Path | None = None,
             table: dict[str, Dataset] | None = None,
             log: Callable[[str], None] = to_stderr) -> list[Path]:
    """Fetch the data sets ``names`` (``all``: every downloadable one) into ``root``; return
    every target path. Files present and verified are skipped."""
    table = DATASETS if table is None else table
    wanted: list[Dataset] = []
    for name in names:
        chosen = [d for d in table.values() if d.downloadable] if name == "all" \
            else [lookup(name, table)]
        wanted.extend(d for d in chosen if d not in wanted)
    base = data_root(root)
    for dataset in wanted:  # refuse before fetching anything
        if not dataset.downloadable:
            raise DataError(f"{dataset.name} cannot be downloaded (licence: "
                            f"{dataset.licence})\n{where(dataset.name, base, table)}")
    manifest = Manifest(base)
    targets: list[Path] = []
    for dataset in wanted:
        for source in dataset.sources:
            targets.extend(_get(dataset.name, source, base, manifest, log))
    return targets


class Manifest:
    """``ROOT/.downloads.json``: each source's SHA-256 and each extracted file's."""

    def __init__(self, root: Path) -> None:
        self.path = root / MANIFEST
        self.data: dict[str, Any] = {"sources": {}, "files": {}}
        if self.path.is_file():
            try:
                self.data.update(json.loads(self.path.read_text(encoding="utf-8")))
            except (ValueError, UnicodeDecodeError, RecursionError) as error:
                raise DataError(f"{self.path}: not a JSON manifest ({error}); delete it and "
                                "run again (every file is then checked anew)") from None

    def source_sha256(self, url: str) -> str | None:
        return self.data["sources"].get(url, {}).get("sha256")

    def files_of(self, source: Source) -> dict[str, str]:
        """The recorded files of ``source``'s targets: relative path -> SHA-256."""
        return {k: v["sha256"] for k, v in self.data["files"].items()
                if v.get("source") == source.url and any(
                    k == t or (t.endswith("/") and k.startswith(t)) for _, t in source.files)}

    def record(self, source: Source, digest: str | None, files: dict[str, str]) -> None:
        if digest is not None:
            self.data["sources"][source.url] = {"sha256": digest}
        for relative in self.files_of(source):
            del self.data["files"][relative]
        for relative, sha in files.items():
            self.data["files"][relative] = {"sha256": sha, "source": source.url}
        atomic_write_text(self.path, json.dumps(self.data, indent=1, sort_keys=True) + "\n")


def _files_under(root: Path, folder: str) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``root/folder``."""
    return {p.relative_to(root).as_posix(): sha256_of(p)
            for p in sorted((root / folder).rglob("*")) if p.is_file()}


def _present(source: Source, root: Path, manifest: Manifest, log: Callable[[str], None]) -> bool:
    """Whether the source's targets are in place: recorded and unchanged, or, never recorded,
    all there (then recorded now; checked against the pinned SHA-256 when stored as is)."""
    recorded = manifest.files_of(source)
    if recorded:
        changed = [r for r, sha in recorded.items()
                   if not (root / r).is_file() or sha256_of(root / r) != sha]
        changed += [t for _, t in source.files if not (
            any(r.startswith(t) for r in recorded) if t.endswith("/") else t in recorded)]
        if not changed:
            log(f"{source.url}: present and verified, skipped")
            return True
        log(f"{root / changed[0]}: missing or changed since the download; fetching again")
        return False
    if not all((root / t).is_dir() and any((root / t).iterdir()) if t.endswith("/")
               else (root / t).is_file() for _, t in source.files):
        return False
    found: dict[str, str] = {}
    for _, target in source.files:
        found.update(_files_under(root, target) if target.endswith("/")
                     else {target: sha256_of(root / target)})
    first = found[source.files[0][1]] if source.as_is else None
    if source.sha256 and first and first != source.sha256:
        log(f"{root / source.files[0][1]}: differs from the pinned SHA-256; fetching again")
        return False
    log(f"{source.url}: files already present, recorded their SHA-256 in {manifest.path}")
    manifest.record(source, first, found)
    return True


def _get(name: str, source: Source, root: Path, manifest: Manifest,
         log: Callable[[str], None]) -> list[Path]:
    """Fetch and extract one source unless its targets are present and verified."""
    targets = [root / t for _, t in source.files]
    if _present(source, root, manifest, log):
        return targets
    expected = source.sha256 or manifest.source_sha256(source.url)
    fetched = root / source.files[0][1] if source.as_is \
        else root / ARCHIVES / f"{name}-{source.url.rstrip('/').rsplit('/', 1)[-1]}"
    if not source.as_is and fetched.is_file():  # left by an earlier run, or put there by hand
        digest = sha256_of(fetched)
        if expected and digest != expected:
            raise DataError(f"{fetched}: SHA-256 {digest} differs from the expected "
                            f"{expected}; delete the file (or put the right one there)")
        log(f"{fetched}: using the file already there")
    else:
        digest = fetch(source.url, fetched, expected, log, changed_hint="if the source changed "
                       f"on purpose, remove its entry from {manifest.path}")
    files = _extract(source, fetched, root)
    manifest.record(source, digest, files)
    if not source.as_is:
        fetched.unlink()
    log(f"{name}: {', '.join(str(t) for t in targets)}")
    return targets


def fetch(url: str, path: Path, expected: str | None, log: Callable[[str], None] = to_stderr,
          hint: str | None = None, changed_hint: str = "", progress: bool = True) -> str:
    """Stream ``url`` to ``path.part`` (resumed by an HTTP Range request if present, with a
    progress display), check its SHA-256 against ``expected`` (None: any), rename it to
    ``path`` (synced, as ``atomic_write`` does); return its SHA-256. Failures are one-line
    ``DataError``s: ``hint`` says what to do when the download fails (default: fetch it by
    hand to ``path``), ``changed_hint`` what to do when the digest differs."""
    part = path.with_name(path.name + ".part")
    path.parent.mkdir(parents=True, exist_ok=True)
    offset = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": "elmo-experiments"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                          timeout=TIMEOUT)
    except urllib.error.HTTPError as error:
        if error.code == 416 and offset:  # the range lies past the end: a stale .part
            part.unlink()
            return fetch(url, path, expected, log, hint, changed_hint, progress)
        raise DataError(f"cannot download {url} (HTTP {error.code} {error.reason}); "
                        f"{hint or f'download it yourself and put it at {path}'}") from None
    except (OSError, http.client.HTTPException) as error:  # URLError is an OSError
        reason = getattr(error, "reason", error)
        raise DataError(f"cannot download {url} ({reason}); "
                        f"{hint or f'offline? download {url} yourself and put it at {path}'}"
                        ) from None
    with response:
        resumed = bool(offset) and response.status == 206 and response.headers.get(
            "Content-Range", "").startswith(f"bytes {offset}-")
        if offset and not resumed:
            log(f"{url}: the server ignored the range request; downloading from the start")
        length = response.headers.get("Content-Length")
        log(f"downloading {url}" + (f" ({int(length) / 1e6:.1f} MB)" if length else "")
            + (f", resuming at byte {offset:,}" if resumed else ""))
        start = offset if resumed else 0
        with progress_display(total=start + int(length) if length else None, initial=start,
                              desc=path.name, unit="B", enabled=progress, unit_scale=True,
                              unit_divisor=1024) as bar:
            received = _stream(response, part, "ab" if resumed else "wb", url, bar)
    if length is not None and received < int(length):
        raise DataError(f"download of {url} ended early ({received:,} of {int(length):,} "
                        f"bytes); run the command again to resume from {part}")
    digest = sha256_of(part)
    if expected and digest != expected:
        part.unlink()
        raise DataError(f"{path}: SHA-256 {digest} differs from the expected {expected}; the "
                        f"download was deleted" + (f" ({changed_hint})" if changed_hint else ""))
    fsync_path(part)  # then renamed into place as atomic_write does
    os.replace(part, path)
    fsync_path(path.parent)
    return digest


def _stream(response: IO[bytes], part: Path, mode: str, url: str, bar: Any) -> int:
    """Copy the response body into ``part`` (a download being staged: renamed into place
    once whole and checked); the bytes copied."""
    received = 0
    with open(part, mode) as out:
        while block := _read(response, part, url):
            out.write(block)
            received += len(block)
            bar.update(len(block))
    return received


def _read(response: IO[bytes], part: Path, url: str) -> bytes:
    try:
        return response.read(BLOCK)
    except (OSError, http.client.HTTPException) as error:
        raise DataError(f"download of {url} interrupted ({error}); run the command again to "
                        f"resume from {part}") from None


def _write(target: Path, source: IO[bytes], compress: bool) -> None:
    """``source``'s bytes to ``target`` under a temporary name, gzip-compressed if asked."""
    def write(tmp: str) -> None:
        with open(tmp, "wb") as raw:
            if compress:  # mtime 0 and no name: the same bytes on every run
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
                    shutil.copyfileobj(source, out, BLOCK)
            else:
                shutil.copyfileobj(source, raw, BLOCK)
    atomic_write(target, write)


def _extract(source: Source, fetched: Path, root: Path) -> dict[str, str]:
    """Put the source's targets in place; relative path -> SHA-256 of each."""
    if source.kind == "file":
        target = root / source.files[0][1]
        if not source.as_is:
            with open(fetched, "rb") as handle:
                _write(target, handle, source.compress)
        return {source.files[0][1]: sha256_of(target)}
    try:
        with zipfile.ZipFile(fetched) as archive:
            files: dict[str, str] = {}
            for member, target in source.files:
                if member.endswith("/"):
                    _extract_folder(archive, member, root / target, source.compress)
                    files.update(_files_under(root, target))
                    continue
                try:
                    with archive.open(member) as handle:
                        _write(root / target, handle, source.compress)
                except KeyError:
                    raise DataError(f"{fetched}: the archive has no {member} (has the source "
                                    "changed?)") from None
                files[target] = sha256_of(root / target)
            return files
    except (zipfile.BadZipFile, EOFError) as error:
        fetched.unlink()
        raise DataError(f"{fetched}: not a readable zip archive ({error}); deleted it, run "
                        "again to download it anew") from None


def _extract_folder(archive: zipfile.ZipFile, prefix: str, folder: Path, compress: bool) -> None:
    """Every file under ``prefix`` into a temporary folder, then renamed to ``folder``."""
    members = [i for i in archive.infolist() if i.filename.startswith(prefix) and not i.is_dir()]
    if not members:
        raise DataError(f"{archive.filename}: the archive has nothing under {prefix} (has the "
                        "source changed?)")
    with staged_folder(folder) as tmp:
        for info in members:
            relative = Path(info.filename[len(prefix):])
            if relative.is_absolute() or ".." in relative.parts:
                raise DataError(f"{archive.filename}: unsafe member path {info.filename}")
            name = relative.with_name(relative.name + ".gz") if compress else relative
            with archive.open(info) as handle:
                _write(tmp / name, handle, compress)
