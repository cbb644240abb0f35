"""Tiny synthetic files in the real formats of the probing data (written here, not copied)."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

CONLLU = """# sent_id = a-1
# text = I don't run.
1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\trun\trun\tVERB\tVB\t_\t0\troot\t_\t_
4.1\tran\trun\tVERB\tVBD\t_\t_\t_\t4:conj\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = a-2
1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_

"""

MRG = """( (S (NP-SBJ (DT The) (NN cat) ) (VP (VBD sat) (NP (-NONE- *T*-1) )) (. .) ))

( (S (NP-SBJ (NNP Pierre) ) (VP (VBZ runs) (PP (-LRB- -LRB-) (IN in) (-RRB- -RRB-) )) ))
"""

TAGFILE = """<contextfile concordance=brown>
<context filename=br-z01 paras=yes>
<p pnum=1>
<s snum=1>
<wf cmd=ignore pos=DT>The</wf>
<wf cmd=done rdf=group pos=NNP lemma=group wnsn=1 lexsn=1:03:00:: pn=group>Big_Town_Club</wf>
<wf cmd=done pos=VB lemma=play wnsn=1 lexsn=2:33:00::>played</wf>
<wf cmd=done pos=NN lemma=year wnsn=2;1 lexsn=1:28:02::;1:28:01::>year</wf>
<wf cmd=done pos=VB lemma=take_place wnsn=1 lexsn=2:30:00::>took_place</wf>
<punc>.</punc>
</s>
<s snum=2>
<wf cmd=done pos=NN lemma=play wnsn=1 lexsn=1:10:01::>play</wf>
<wf cmd=done pos=JJ lemma=recent wnsn=0 lexsn=5:00:00:past:00>recent</wf>
<wf cmd=done pos=VBD ot=notag>was</wf>
</s>
</p>
</context>
</contextfile>
"""

BROWNV = """<contextfile concordance=brownv>
<context filename=br-z02 paras=yes>
<p pnum=1>
<s snum=1>
<wf cmd=tag pos=NNS>actors</wf>
<wf cmd=done pos=VB lemma=play wnsn=1 lexsn=2:33:00::>play</wf>
<wf cmd=tag pos=NN>play</wf>
</s>
</p>
</context>
</contextfile>
"""

RAGANATO_XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="tiny">
<text id="d000">
<sentence id="d000.s000">
<wf lemma="the" pos="DET">The</wf>
<wf lemma="actor" pos="NOUN">actors</wf>
<instance id="d000.s000.t000" lemma="play" pos="VERB">played</instance>
<wf lemma="a" pos="DET">a</wf>
<instance id="d000.s000.t001" lemma="play" pos="NOUN">play</instance>
<wf lemma="." pos=".">.</wf>
</sentence>
<sentence id="d000.s001">
<instance id="d000.s001.t000" lemma="belong_to" pos="VERB">belong to</instance>
<wf lemma="&apos;s" pos="PRT">&apos;s</wf>
<instance id="d000.s001.t001" lemma="recent" pos="ADJ">recent</instance>
</sentence>
</text>
</corpus>
"""

GOLD_KEYS = """d000.s000.t000 play%2:33:00::
d000.s000.t001 play%1:10:01:: play%1:10:03::
d000.s001.t000 belong_to%2:42:00::
d000.s001.t001 recent%5:00:00:past:00
"""


def write_ud(root: Path) -> Path:
    """``pos/ud_english_ewt/en_ewt-ud-{train.conllu.gz,dev,test}.conllu`` under ``root``."""
    folder = root / "pos" / "ud_english_ewt"
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / "en_ewt-ud-train.conllu.gz", "wt", encoding="utf-8") as handle:
        handle.write(CONLLU * 3)
    (folder / "en_ewt-ud-dev.conllu").write_text(CONLLU, encoding="utf-8")
    (folder / "en_ewt-ud-test.conllu").write_text(CONLLU, encoding="utf-8")
    return folder


def write_ptb_zip(path: Path, numbers: tuple[int, ...] = (1, 160, 180)) -> Path:
    """An NLTK-layout treebank zip with ``combined/wsj_NNNN.mrg`` for each file number."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("treebank/combined/README", "not a parse")
        for number in numbers:
            archive.writestr(f"treebank/combined/wsj_{number:04d}.mrg", MRG)
            archive.writestr(f"treebank/tagged/wsj_{number:04d}.pos", "The/DT cat/NN\n")
    return path


def write_semcor(path: Path) -> Path:
    """A SemCor 3.0-layout tar.gz: one brown1 tagfile and one brownv tagfile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, text in (("semcor3.0/brown1/tagfiles/br-z01", TAGFILE),
                           ("semcor3.0/brownv/tagfiles/br-z02", BROWNV),
                           ("semcor3.0/README.semcor3.0", "readme")):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def write_eval_set(root: Path, name: str = "semeval2007") -> tuple[Path, Path]:
    """``wsd/Evaluation_Datasets/<name>/<name>.{data.xml,gold.key.txt}`` under ``root``."""
    folder = root / "wsd" / "Evaluation_Datasets" / name
    folder.mkdir(parents=True, exist_ok=True)
    xml, keys = folder / f"{name}.data.xml", folder / f"{name}.gold.key.txt"
    xml.write_text(RAGANATO_XML, encoding="utf-8")
    keys.write_text(GOLD_KEYS, encoding="utf-8")
    return xml, keys


class FakeLemma:
    """A WordNet lemma as the first-sense baseline sees it."""

    def __init__(self, name: str, key: str) -> None:
        self._name, self._key = name, key

    def name(self) -> str:
        return self._name

    def key(self) -> str:
        return self._key


class FakeWordNet:
    """``lemmas(name, pos)`` in sense order from a small table."""

    def __init__(self, table: dict[tuple[str, str], list[str]]) -> None:
        self.table = table

    def lemmas(self, lemma: str, pos: str) -> list[FakeLemma]:
        return [FakeLemma(k.split("%")[0], k) for k in self.table.get((lemma, pos), [])]
