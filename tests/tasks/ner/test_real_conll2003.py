"""The reader on the real CoNLL-2003 files (skipped where ELMO_DATA_DIR lacks them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elmo_experiments.config.validate import Validator
from elmo_experiments.data.tag_schemes import convert_tags
from elmo_experiments.metrics.span_f1 import extract_chunks

DATA = Path(os.environ.get("ELMO_DATA_DIR", "no-data")) / "ner_conll2003"
# Counts from the data set's SOURCE.txt (sentences exclude -DOCSTART- lines).
COUNTS = {"eng.train": (14041, 203621), "eng.testa": (3250, 51362), "eng.testb": (3453, 46435)}

pytestmark = pytest.mark.skipif(not (DATA / "eng.testa").is_file(),
                                reason="real CoNLL-2003 not found under $ELMO_DATA_DIR")


def _reader(scheme: str):
    config = {"type": "conll2003", "coding_scheme": scheme,
              "token_indexers": {"tokens": {"type": "single_id"}}}
    validator = Validator()
    spec = validator.component(config, "dataset_reader", "dataset_reader")
    assert not validator.problems
    return spec.build()


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_counts_and_tags(name):
    instances = _reader("IOB1").read(DATA / name)
    sentences, tokens = COUNTS[name]
    assert len(instances) == sentences
    assert sum(len(i["tokens"]) for i in instances) == tokens
    types = {t.split("-", 1)[1] for i in instances for t in i["tags"] if t != "O"}
    assert types == {"PER", "LOC", "ORG", "MISC"}


@pytest.mark.parametrize("scheme", ["BIO", "BIOUL"])
def test_conversion_keeps_every_chunk(scheme):
    original = _reader("IOB1").read(DATA / "eng.testa")
    converted = _reader(scheme).read(DATA / "eng.testa")
    for a, b in zip(original, converted, strict=True):
        assert extract_chunks(a["tags"]) == extract_chunks(b["tags"])
        assert convert_tags(b["tags"], scheme, "IOB1") == a["tags"]
