"""The SQuAD v1.1 reader: offsets, answer alignment, length limits, malformed files, ``.gz``,
the embedded sample, batching through the framework, and the real dev file."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest

from elmo_experiments.config.loader import PROJECT_ROOT
from elmo_experiments.config.validate import Validator
from elmo_experiments.data.batching import collate, index_instances
from elmo_experiments.data.tokenizers import tokenize, tokenize_with_offsets
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.errors import DataError
from elmo_experiments.tasks.squad.reader import (
    SPLIT_CHARACTERS,
    SquadReader,
    locate,
    token_span,
)

SAMPLE = PROJECT_ROOT / "reproduction" / "squad" / "sample"
REAL = Path(os.environ.get("ELMO_DATA_DIR", "no-data")) / "squad"

TRICKY = [
    "Café crème at the Musée d'Orsay, naïve façade; Ærø and Øresund.",
    "東京タワーは1958年に完成した。 Beijing 北京 hosted it.",
    "Party 🎉🎉 time 👩‍👩‍👧 with family!",
    "A\u00a0non-breaking space, a thin\u2009one, and tabs\tand\n\nnewlines.",
    "The war—long and bitter—ended (1990), said the U.S. envoy.",
    'He called it "quoted" and “curly”, then left...',
    "A well-known, state-of-the-art 1990–1995 survey ~5 km north/south of US$100.",
    "Citations.[12] and page refs.:441 and 11:28 a.m.",
    "",
    "   \n ",
]


def paragraph(context: str, *questions: dict[str, Any]) -> dict[str, Any]:
    return {"context": context, "qas": list(questions)}


def question(qid: str, *answers: tuple[str, int], text: str = "What?") -> dict[str, Any]:
    return {"id": qid, "question": text,
            "answers": [{"text": a, "answer_start": s} for a, s in answers]}


def at(context: str, text: str, occurrence: int = 0) -> tuple[str, int]:
    """An answer pointing at the n-th occurrence of ``text`` in ``context``."""
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(text, start + 1)
    return text, start


def write(tmp_path: Path, *paragraphs: dict[str, Any], name: str = "squad.json",
          title: str = "Ostrand", data: Any = None) -> Path:
    document = data if data is not None else {
        "version": "1.1", "data": [{"title": title, "paragraphs": list(paragraphs)}]}
    text = json.dumps(document, ensure_ascii=False)
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def answer_text(instance: dict[str, Any]) -> str:
    start, end = instance["answer"]
    offsets = instance["offsets"]
    return instance["passage_text"][offsets[start][0]:offsets[end][1]]


# --- tokenisation keeping offsets ---------------------------------------------------------

@pytest.mark.parametrize("text", TRICKY)
@pytest.mark.parametrize("characters", ["", SPLIT_CHARACTERS])
def test_offsets_point_at_their_tokens(text: str, characters: str) -> None:
    tokens = tokenize_with_offsets(text, characters)
    assert all(text[start:end] == token for token, start, end in tokens)
    assert all(token and not any(c.isspace() for c in token) for token, _, _ in tokens)
    assert [start for _, start, _ in tokens] == sorted(start for _, start, _ in tokens)
    # every non-whitespace character is in exactly one token
    covered = [i for _, start, end in tokens for i in range(start, end)]
    assert covered == [i for i, c in enumerate(text) if not c.isspace()]


def test_without_split_characters_the_tokens_are_spacys() -> None:
    for text in TRICKY:
        assert [t for t, _, _ in tokenize_with_offsets(text)] == tokenize(text)


def test_split_characters_become_tokens_and_the_rest_is_tokenised_again() -> None:
    def words(text: str) -> list[str]:
        return [t for t, _, _ in tokenize_with_offsets(text, SPLIT_CHARACTERS)]

    assert words("in 1990–1995,") == ["in", "1990", "–", "1995", ","]
    assert words("mid-2015") == ["mid", "-", "2015"]
    assert words("US$100") == ["US", "$", "100"]
    assert words("in 1830.[n 2]") == ["in", "1830", ".", "[", "n", "2", "]"]
    assert words("Sekulić.:32") == ["Sekulić", ".", ":", "32"]
    # apostrophes, abbreviations and decimals are left as spaCy has them
    assert words("The U.S. didn't pay 3.5% of Europe's debt.") == [
        "The", "U.S.", "did", "n't", "pay", "3.5", "%", "of", "Europe", "'s", "debt", "."]


def test_offsets_on_the_sample() -> None:
    reader = SquadReader({})
    for name in ("train.json", "dev.json"):
        for instance in reader.read(SAMPLE / name):
            text = instance["passage_text"]
            assert len(instance["offsets"]) == len(instance["passage"])
            for token, (start, end) in zip(instance["passage"], instance["offsets"], strict=True):
                assert text[start:end] == token


# --- alignment ----------------------------------------------------------------------------

def test_locate_and_token_span() -> None:
    context = "Born in the 1990s, in 1990 exactly."
    assert locate(context, "1990", context.index("1990 ")) == ((22, 26), False)
    assert locate(context, " 1990 ", 21) == ((22, 26), False)  # whitespace left out
    assert locate(context, "1990", 0) == ((12, 16), True)  # nearest occurrence to 0
    assert locate(context, "1990", 30) == ((22, 26), True)
    assert locate(context, "2001", 5) == (None, True)
    assert locate(context, "  ", 0) == (None, False)
    offsets = [(s, e) for _, s, e in tokenize_with_offsets(context)]
    assert token_span(offsets, 22, 26) == ((6, 6), True)
    assert token_span(offsets, 12, 16) == ((3, 3), False)  # inside "1990s": covering span
    assert token_span(offsets, 17, 17) == (None, False)


def test_answers_at_the_start_and_end_and_across_tokens(tmp_path: Path) -> None:
    context = "Velmar rose in the 1990s (see 1990–95), and fell in 2001."
    path = write(tmp_path, paragraph(
        context,
        question("start", at(context, "Velmar")),
        question("end", at(context, "in 2001.")),
        question("inside", at(context, "1990")),  # the first "1990" is inside "1990s"
        question("dash", at(context, "1990", 1)),
        question("crossing", at(context, "990s (see")),
        question("glued", at(context, "(see 1990–95),")),
    ))
    reader = SquadReader({})
    instances = {i["id"]: i for i in reader.read(path)}
    passage = instances["start"]["passage"]
    assert instances["start"]["answer"] == (0, 0)
    assert instances["end"]["answer"] == (len(passage) - 3, len(passage) - 1)
    assert answer_text(instances["end"]) == "in 2001."
    assert answer_text(instances["inside"]) == "1990s"  # the covering token span
    assert answer_text(instances["dash"]) == "1990"  # split off at the dash
    assert answer_text(instances["crossing"]) == "1990s (see"
    assert answer_text(instances["glued"]) == "(see 1990–95),"
    assert reader.alignment == {"questions": 6, "answers": 6, "exact": 4, "inexact": 2,
                                "not_found": 0, "searched": 0, "dropped": 0, "instances": 6}


def test_without_split_characters_the_dashed_answer_is_inexact(tmp_path: Path) -> None:
    context = "The war lasted 1914–1918 in all."
    path = write(tmp_path, paragraph(context, question("q", at(context, "1918"))))
    reader = SquadReader({}, split_characters="")
    [instance] = reader.read(path)
    assert answer_text(instance) == "1914–1918"
    assert reader.alignment["inexact"] == 1
    [instance] = SquadReader({}).read(path)
    assert answer_text(instance) == "1918"


def test_wrong_answer_start_is_repaired_and_a_missing_text_keeps_the_question(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    context = "Dunhaven lies on the Grey Sea. Ships leave Dunhaven daily."
    path = write(tmp_path, paragraph(
        context,
        question("shifted", ("Grey Sea", 3)),
        question("nearest", ("Dunhaven", 40)),  # nearer the second occurrence
        question("outside", ("Grey Sea", 10_000)),
        question("negative", ("Grey Sea", -5)),
        question("absent", ("Black Sea", 0)),
        question("absent first", ("Black Sea", 0), at(context, "the Grey Sea")),
    ), name="dev.json")
    reader = SquadReader({})
    with caplog.at_level(logging.INFO, logger="elmo_experiments"):
        instances = {i["id"]: i for i in reader.read(path)}
    assert len(instances) == 6  # every question is an instance
    for qid in ("shifted", "outside", "negative"):
        assert answer_text(instances[qid]) == "Grey Sea"
    assert instances["nearest"]["offsets"][instances["nearest"]["answer"][0]][0] == 43
    assert "answer" not in instances["absent"]
    assert instances["absent"]["answers"] == ["Black Sea"]
    assert answer_text(instances["absent first"]) == "the Grey Sea"  # the first located
    assert reader.alignment == {"questions": 6, "answers": 7, "exact": 5, "inexact": 0,
                                "not_found": 2, "searched": 4, "dropped": 0, "instances": 6}
    assert caplog.messages == [
        "dev.json: 6 questions, 7 answers; 5 aligned exactly, 0 inexactly, 2 not found "
        "(4 located by searching for the text)"]


def test_every_gold_answer_is_kept_in_file_order(tmp_path: Path) -> None:
    context = "Orla Quist built the lamp in 1874, in Dunhaven."
    answers = [at(context, "in 1874"), at(context, "1874"), at(context, "1874,"),
               ("the year 1874", 0)]
    path = write(tmp_path, paragraph(context, question("q", *answers)))
    [instance] = SquadReader({}).read(path)
    assert instance["answers"] == ["in 1874", "1874", "1874,", "the year 1874"]
    assert answer_text(instance) == "in 1874"  # the first gold answer
    assert instance["title"] == "Ostrand"
    assert instance["question"] == ["What", "?"]


# --- length limits ------------------------------------------------------------------------

LONG = " ".join(f"w{i}" for i in range(30)) + "."


def limited_file(tmp_path: Path) -> Path:
    return write(tmp_path, paragraph(
        LONG,
        question("early", at(LONG, "w2 w3"), text="Which words come early in the list?"),
        question("late", at(LONG, "w25"), text="Late?"),
        question("straddling", at(LONG, "w9 w10 w11"), text="Across?"),
        question("second", at(LONG, "w28"), at(LONG, "w1"), text="Two?"),
        question("absent", ("nowhere", 0), text="None?"),
    ))


def test_training_limits_truncate_and_drop_unanswerable_questions(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    reader = SquadReader({}, passage_length_limit=10, question_length_limit=3)
    with caplog.at_level(logging.INFO, logger="elmo_experiments"):
        instances = {i["id"]: i for i in reader.read(limited_file(tmp_path))}
    assert sorted(instances) == ["early", "second"]
    early = instances["early"]
    assert early["passage"] == [f"w{i}" for i in range(10)]
    assert len(early["offsets"]) == 10
    assert early["passage_text"] == LONG  # the context stays whole
    assert early["question"] == ["Which", "words", "come"]
    assert early["answer"] == (2, 3)
    assert instances["second"]["answer"] == (1, 1)  # the first answer inside the limit
    assert instances["second"]["answers"] == ["w28", "w1"]
    assert reader.alignment["dropped"] == 3
    assert reader.alignment["instances"] == 2
    assert reader.read_report.describe() == (
        "5 questions read, 3 dropped (2 with no answer inside the first 10 passage tokens, 1 "
        "whose answers are not found in the passage)")
    assert caplog.messages[-1].endswith(
        "; 3 questions dropped (no answer inside the first 10 passage tokens)")


def test_evaluation_reader_keeps_every_question(tmp_path: Path) -> None:
    reader = SquadReader({})
    instances = reader.read(limited_file(tmp_path))
    assert [i["id"] for i in instances] == ["early", "late", "straddling", "second", "absent"]
    assert all(len(i["passage"]) == 31 for i in instances)
    assert "answer" not in instances[-1]
    assert reader.alignment["dropped"] == 0
    assert reader.read_report.describe() == "5 questions read"


def test_question_limit_alone_still_drops_unlocated_answers(tmp_path: Path) -> None:
    instances = SquadReader({}, question_length_limit=1).read(limited_file(tmp_path))
    assert [i["id"] for i in instances] == ["early", "late", "straddling", "second"]
    assert all(len(i["question"]) == 1 for i in instances)


def test_max_articles(tmp_path: Path) -> None:
    articles = [{"title": f"A{n}", "paragraphs": [paragraph(
        "Some text here.", question(f"q{n}", ("text", 5)))]} for n in range(3)]
    path = write(tmp_path, data={"data": articles})
    assert [i["id"] for i in SquadReader({}, max_articles=2).read(path)] == ["q0", "q1"]


# --- malformed files ----------------------------------------------------------------------

def good_document() -> dict[str, Any]:
    context = "The Normans settled in the north in 911."
    return {"version": "1.1", "data": [
        {"title": "Vikings",
         "paragraphs": [paragraph(context, question("v1", at(context, "911")))]},
        {"title": "Normans", "paragraphs": [
            paragraph(context, question("n1", at(context, "911"))),
            paragraph(context, question("n2", at(context, "911")),
                      question("q-7", at(context, "the north"))),
        ]},
    ]}


def broken(change: str) -> dict[str, Any]:
    document = good_document()
    paragraph_ = document["data"][1]["paragraphs"][1]
    question_ = paragraph_["qas"][1]
    answer_ = question_["answers"][0]
    targets = {"data": document, "paragraphs": document["data"][1], "context": paragraph_,
               "qas": paragraph_, "id": question_, "question": question_,
               "answers": question_, "text": answer_, "answer_start": answer_}
    key, _, kind = change.partition(":")
    if kind:
        targets[key][key] = {"list": ["x"], "number": 5, "string": "12", "bool": True}[kind]
    else:
        del targets[key][key]
    return document


ARTICLE = r'article 2 \("Normans"\), paragraph 2'


@pytest.mark.parametrize("change,message", [
    ("data", ": 'data' is missing"),
    ("data:number", ": 'data' is not a list"),
    ("paragraphs", r': article 2 \("Normans"\): \'paragraphs\' is missing'),
    ("context", f": {ARTICLE}: 'context' is missing"),
    ("context:list", f": {ARTICLE}: 'context' is not text"),
    ("qas", f": {ARTICLE}: 'qas' is missing"),
    ("id", f": {ARTICLE}, question 2: 'id' is missing"),
    ("id:number", f": {ARTICLE}, question 2: 'id' is not text"),
    ("question", ": question q-7: 'question' is missing"),
    ("answers", ": question q-7: 'answers' is missing"),
    ("answers:number", ": question q-7: 'answers' is not a list"),
    ("text", ": question q-7: answer 1: 'text' is missing"),
    ("answer_start", ": question q-7: answer 1: 'answer_start' is missing"),
    ("answer_start:string", ": question q-7: answer 1: 'answer_start' is not an integer"),
    ("answer_start:bool", ": question q-7: answer 1: 'answer_start' is not an integer"),
])
def test_malformed_files_are_one_line_errors_naming_file_and_question(
        tmp_path: Path, change: str, message: str) -> None:
    path = write(tmp_path, data=broken(change), name="dev-v1.1.json")
    with pytest.raises(DataError) as error:
        SquadReader({}).read(path)
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert re.search(message, text), text


@pytest.mark.parametrize("content,message", [
    ('{"data": [', r":1: not valid JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"data": []}', "no questions found"),
    ('{"data": [{"title": "T", "paragraphs": [{"context": "Text.", "qas": []}]}]}',
     "no questions found"),
    ('{"data": [{"title": "T", "paragraphs": [{"context": " ", "qas": []}]}]}',
     r'article 1 \("T"\), paragraph 1: \'context\' is empty'),
    ('{"data": [{"title": 3, "paragraphs": []}]}', "article 1: 'title' is not text"),
    ('{"data": [7]}', "article 1: not a JSON object"),
])
def test_other_malformed_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "train.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=f"^{re.escape(str(path))}.*{message}") as error:
        SquadReader({}).read(path)
    assert "\n" not in str(error.value)


def test_questions_without_answers_text_or_with_repeated_ids(tmp_path: Path) -> None:
    context = "Some text."
    cases = {
        "'answers' is empty": paragraph(context, {"id": "a", "question": "Q?", "answers": []}),
        "'question' is empty": paragraph(context, question("b", ("text", 5), text=" ")),
        "the id is repeated": paragraph(context, question("c", ("text", 5)),
                                        question("c", ("text", 5))),
    }
    for message, content in cases.items():
        with pytest.raises(DataError, match=f": question [abc]: {message}"):
            SquadReader({}).read(write(tmp_path, content))


def test_corrupt_gzip_and_non_utf8(tmp_path: Path) -> None:
    (tmp_path / "bad.json.gz").write_bytes(gzip.compress(b'{"data": []}')[:-6])
    with pytest.raises(DataError, match=r"bad\.json\.gz: cannot read the file"):
        SquadReader({}).read(tmp_path / "bad.json.gz")
    (tmp_path / "latin.json").write_bytes('{"data": "café"}'.encode("latin-1"))
    with pytest.raises(DataError, match=r"latin\.json: not UTF-8 text"):
        SquadReader({}).read(tmp_path / "latin.json")


def test_gzipped_file_reads_as_the_plain_one(tmp_path: Path) -> None:
    document = json.loads((SAMPLE / "dev.json").read_text(encoding="utf-8"))
    plain = write(tmp_path, data=document, name="dev.json")
    gzipped = write(tmp_path, data=document, name="other.json.gz")
    reader = SquadReader({})
    assert reader.read(plain) == reader.read(gzipped)
    assert reader.read(tmp_path / "other.json") == reader.read(plain)  # finds the .gz


# --- the sample and the framework ---------------------------------------------------------

def test_the_embedded_sample() -> None:
    reader = SquadReader({})
    train = reader.read(SAMPLE / "train.json")
    assert len(train) == 120
    assert reader.alignment["not_found"] == reader.alignment["searched"] == 0
    dev = reader.read(SAMPLE / "dev.json")
    assert len(dev) == 40
    assert all(len(i["answers"]) >= 2 for i in dev)
    assert reader.alignment["not_found"] == reader.alignment["searched"] == 0
    for name in ("train.json", "dev.json"):
        document = json.loads((SAMPLE / name).read_text(encoding="utf-8"))
        for article in document["data"]:
            for para in article["paragraphs"]:
                for qa in para["qas"]:
                    for answer in qa["answers"]:
                        start = answer["answer_start"]
                        assert para["context"][start:].startswith(answer["text"]), qa["id"]
        assert (SAMPLE / name).stat().st_size < 100_000


def build_reader(**params: Any) -> Any:
    config = {"type": "squad", "token_indexers": {
        "tokens": {"type": "single_id"}, "token_characters": {"type": "characters"}}, **params}
    validator = Validator()
    spec = validator.component(config, "dataset_reader", "dataset_reader")
    assert not validator.problems
    return spec.build()


def test_instances_index_and_batch_through_the_framework(tmp_path: Path) -> None:
    reader = build_reader(passage_length_limit=400, question_length_limit=30)
    assert isinstance(reader, SquadReader)
    train = reader.read(SAMPLE / "train.json")
    counts: dict[str, Any] = {}
    for instance in train:
        for name, field in reader.fields.items():
            if instance.get(name) is not None:
                field.count(instance[name], counts)
    vocab = Vocabulary.from_counts(counts)
    indexed = index_instances(train[:4], reader.fields, vocab, source="train.json")
    batch = collate(indexed, reader.fields)
    arguments = batch.arguments()
    assert arguments["answer"].shape == (4, 2)
    assert arguments["passage"]["tokens"].shape == arguments["passage_mask"].shape
    assert arguments["question"]["token_characters"].shape[:2] == \
        arguments["question_mask"].shape
    lengths = arguments["passage_mask"].sum(1).tolist()
    assert all(end < length for (_, end), length in
               zip(arguments["answer"].tolist(), lengths, strict=True))
    assert [m["id"] for m in arguments["metadata"]] == [i["id"] for i in train[:4]]

    # evaluation: an instance whose answer was not located has no target; its batch none
    context = "Nothing here matches."
    path = write(tmp_path, paragraph(context, question("x", ("absent", 0)),
                                     question("y", at(context, "Nothing"))))
    evaluation = build_reader().read(path)
    batch = collate(index_instances(evaluation, reader.fields, vocab), reader.fields)
    assert "answer" not in batch.inputs
    assert batch.inputs["passage"]["tokens"].shape[0] == 2
    assert [m["answers"] for m in batch.metadata] == [["absent"], ["Nothing"]]


def test_text_to_instance() -> None:
    instance = SquadReader({}).text_to_instance("Who?", "Orla Quist (1838–1907) did.")
    assert instance["passage"] == ["Orla", "Quist", "(", "1838", "–", "1907", ")", "did", "."]
    assert instance["offsets"][3] == (12, 16)
    assert "answer" not in instance


# --- the real data ------------------------------------------------------------------------

@pytest.mark.skipif(not (REAL / "dev-v1.1.json.gz").is_file()
                    and not (REAL / "dev-v1.1.json").is_file(),
                    reason="the real SQuAD dev file is not under $ELMO_DATA_DIR/squad")
def test_real_dev_file() -> None:
    reader = SquadReader({})
    instances = reader.read(REAL / "dev-v1.1.json")
    assert len(instances) == 10_570
    assert sum(len(i["answers"]) for i in instances) == 34_726
    assert all("answer" in i for i in instances)
    counts = reader.alignment
    assert counts["not_found"] == 0 and counts["answers"] == 34_726
    assert counts["inexact"] < 0.01 * counts["answers"]  # 315 with spaCy 3 (README)
    for instance in instances[:500]:
        text = instance["passage_text"]
        assert all(text[s:e] == t for t, (s, e) in
                   zip(instance["passage"], instance["offsets"], strict=True))
