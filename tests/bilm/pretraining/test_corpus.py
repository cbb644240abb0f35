"""Corpus preparation for biLM pretraining: formats, paths, splits, vocabulary, LM batches."""

from __future__ import annotations

import gzip
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from elmo_experiments.bilm.characters import token_to_ids
from elmo_experiments.bilm.pretraining.corpus import (
    PreparedCorpus,
    expand,
    prepare_corpus,
    read_sentences,
)
from elmo_experiments.bilm.pretraining.lm_data import LmLoader, SoftmaxVocabulary, sentence_spans
from elmo_experiments.errors import DataError

LOADER = {"batch_size": 2, "max_tokens": None, "batches_per_epoch": None,
          "max_eval_sentences": None}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def decode(corpus: PreparedCorpus, split: str) -> list[list[str]]:
    """Sentences of a prepared split, checking the -1 after every sentence."""
    ids = np.asarray(corpus.ids(split))
    assert ids.dtype == np.int32
    assert len(ids) == 0 or ids[-1] == -1
    sentences: list[list[str]] = [[]]
    for value in ids.tolist():
        if value == -1:
            sentences.append([])
        else:
            sentences[-1].append(corpus.types[value])
    assert sentences[-1] == []
    return sentences[:-1]


# ----------------------------------------------------------------- formats


def test_tokenized_skips_blank_lines_and_splits_on_whitespace(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "The cat  sat .\n\n   \n\tA dog\tran\n")
    assert list(read_sentences(str(path), "tokenized")) == [["The", "cat", "sat", "."],
                                                             ["A", "dog", "ran"]]


def test_raw_joins_hard_wrapped_lines_and_splits_sentences(tmp_path: Path) -> None:
    text = ("The cat sat on\n"
            "the mat. It was\n"
            "happy, wasn't it?\n"
            "\n"
            "  Mr. Smith\n"
            "disagreed\n"
            "\n\n"
            "A last paragraph without a full stop\n")
    path = write(tmp_path / "story.txt", text)
    assert list(read_sentences(str(path), "raw")) == [
        ["The", "cat", "sat", "on", "the", "mat", "."],
        ["It", "was", "happy", ",", "was", "n't", "it", "?"],
        ["Mr.", "Smith", "disagreed"],  # a blank line ends the sentence and the paragraph
        ["A", "last", "paragraph", "without", "a", "full", "stop"],
    ]


def write_brown(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("brown/", "")
        archive.writestr("brown/README", "BROWN CORPUS\n\nA Standard/nn Corpus/nn ./.\n")
        archive.writestr("brown/cats.txt", "ca01 news\nca02 news\ncb01 editorial\n")
        archive.writestr("brown/CONTENTS", "ca01 Fulton/np County/nn\n")
        archive.writestr("brown/cb01", "\n\n\tAssembly/nn-tl session/nn ./.\n")
        archive.writestr("brown/ca01",
                         "\n\n\tThe/at Fulton/np-tl County/nn-tl said/vbd ./.\n\n\n"
                         "\tIt/pps cost/vbd 1/2/cd dollar/nn ./.\n")
        archive.writestr("brown/ca02", "\n\tNo/at one/cd came/vbd ./.\n")
    return path


def test_brown_zip_reads_texts_in_name_order_and_skips_readme_and_cats(tmp_path: Path) -> None:
    path = write_brown(tmp_path / "brown.zip")
    assert list(read_sentences(str(path), "brown")) == [
        ["The", "Fulton", "County", "said", "."],
        ["It", "cost", "1/2", "dollar", "."],  # only the last slash separates the tag
        ["No", "one", "came", "."],
        ["Assembly", "session", "."],
    ]


def test_brown_rejects_a_file_that_is_not_a_zip(tmp_path: Path) -> None:
    path = write(tmp_path / "brown.zip", "not a zip\n")
    with pytest.raises(DataError, match="not a zip file") as error:
        list(read_sentences(str(path), "brown"))
    assert "\n" not in str(error.value)


def test_brown_text_that_is_not_utf8_names_the_archive_member_and_line(tmp_path: Path) -> None:
    """Decoded with "replace", Latin-1 ``caf\xe9`` became ``caf\ufffd``, silently."""
    path = tmp_path / "brown.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("brown/ca01", "The/at cafe/nn\n\tgood/jj caf\xe9/nn ./.\n".encode(
            "latin-1"))
    with pytest.raises(DataError) as info:
        list(read_sentences(str(path), "brown"))
    assert str(info.value) == (f"{path}:brown/ca01:2: not UTF-8 text (byte 0xe9 at column "
                               f"13)")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("brown/ca01", b"The/at\n" + b"\0" * 20)
    with pytest.raises(DataError) as info:
        list(read_sentences(str(path), "brown"))
    assert str(info.value) == f"{path}:brown/ca01:2: {NUL}"


CONLLU = ("# sent_id = 1\n# text = Don't go.\n"
          "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
          "1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
          "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
          "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n"
          "3.1\tgone\t_\t_\t_\t_\t_\t_\t_\t_\n"
          "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n"
          "1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t_\t_\n")


def test_conllu_reads_the_form_column_without_multiword_and_empty_nodes(tmp_path: Path) -> None:
    path = write(tmp_path / "ewt.conllu", CONLLU)
    assert list(read_sentences(str(path), "conllu")) == [["Do", "n't", "go", "."], ["Yes"]]


def test_conllu_on_running_text_names_the_first_line_that_is_not_a_word(tmp_path: Path) -> None:
    path = write(tmp_path / "story.txt", "# a comment\nOnce upon a time .\n")
    with pytest.raises(DataError, match=r"story.txt:2: 'Once upon a time .' is not a CoNLL-U "
                       r"word id \(1, 3-4 or 5.1\): is this file CoNLL-U\?"):
        list(read_sentences(str(path), "conllu"))


def test_conllu_with_too_few_columns_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.conllu", "1\tDo\tdo\n")
    with pytest.raises(DataError, match=r"bad.conllu:1: 3 columns") as error:
        list(read_sentences(str(path), "conllu"))
    assert "\n" not in str(error.value)


NUL = "NUL bytes, not text (a binary or damaged file, or UTF-16?)"


@pytest.mark.parametrize("name, data, fmt, line", [
    ("zeros.txt", b"\0" * 100 + b"\n", "raw", 1),  # what a crash leaves: accepted as a token
    ("zeros.txt", b"\0" * 4096, "tokenized", 1),
    ("zeros.txt.gz", gzip.compress(b"\0" * 50), "raw", 1),
    ("tail.txt", b"a b\n" + b"\0" * 10 + b"\n", "tokenized", 2),
    ("zeros.conll", b"EU NNP B-NP B-ORG\n" + b"\0" * 30 + b"\n", "conll", 2),
    ("inside.txt", b"a\0b c\n", "tokenized", 1),  # never part of a word
    ("utf16.txt", "Das ist gut.\n".encode("utf-16-le"), "raw", 1),  # no BOM: valid UTF-8
], ids=["raw", "tokenized", "gz", "after-text", "conll", "inside-a-word", "utf-16"])
def test_nul_bytes_are_refused_naming_the_file_and_line(tmp_path: Path, name: str, data: bytes,
                                                         fmt: str, line: int) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DataError) as info:
        list(read_sentences(str(path), fmt))
    assert str(info.value) == f"{path}:{line}: {NUL}"


def test_conll_on_running_text_is_refused_naming_the_line(tmp_path: Path) -> None:
    """Only the first word of each line was kept: ``Das``, ``Noch``."""
    path = write(tmp_path / "plain.txt", "Das ist ein Test mit Worten.\nNoch ein Satz.\n")
    with pytest.raises(DataError) as info:
        list(read_sentences(str(path), "conll"))
    assert str(info.value) == (
        f"{path}:2: 3 columns, but line 1 has 6: CoNLL has a token and its tags on each line, "
        f"the same number on every line of a sentence (running text? use format raw or "
        f"tokenized)")
    conll = write(tmp_path / "ner.txt", "-DOCSTART- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ "
                  "B-VP O\n\nPeter NNP B-NP B-PER\n")  # the marker line is not a token line
    assert list(read_sentences(str(conll), "conll")) == [["EU", "rejects"], ["Peter"]]
    srl = write(tmp_path / "srl.txt", "The DT (A0*\ncat NN *)\n\nIt PRP (A0*) (A1*)\n"
                "ran VBD (V*) *\n")  # CoNLL-2005: a column per predicate, per sentence
    assert list(read_sentences(str(srl), "conll")) == [["The", "cat"], ["It", "ran"]]


@pytest.mark.skipif(not Path(os.environ.get("ELMO_DATA_DIR", "/nonexistent"),
                             "ner_conll2003", "eng.testa").is_file(),
                    reason="ELMO_DATA_DIR holds no CoNLL-2003 data")
def test_the_real_conll2003_files_pass_the_column_check() -> None:
    folder = Path(os.environ["ELMO_DATA_DIR"]) / "ner_conll2003"
    counts = {name: sum(1 for _ in read_sentences(str(folder / name), "conll"))
              for name in ("eng.train", "eng.testa", "eng.testb")}  # eng.train: its .gz
    assert counts == {"eng.train": 14041, "eng.testa": 3250, "eng.testb": 3453}


def test_gzip_files_are_read_transparently(tmp_path: Path) -> None:
    with gzip.open(tmp_path / "news.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("Zipped words here\nand here\n")
    expected = [["Zipped", "words", "here"], ["and", "here"]]
    assert list(read_sentences(str(tmp_path / "news.txt.gz"), "tokenized")) == expected
    # the name without .gz finds the gzipped file too
    assert expand(str(tmp_path / "news.txt")) == [tmp_path / "news.txt"]
    assert list(read_sentences(str(tmp_path / "news.txt"), "tokenized")) == expected


def test_folders_expand_recursively_in_sorted_order(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    write(folder / "b.txt", "second file\n")
    write(folder / "a.txt", "first file\n")
    write(folder / "sub" / "c.txt", "third file\n")
    with gzip.open(folder / "d.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("fourth file gz\n")
    assert expand(str(folder)) == [folder / "a.txt", folder / "b.txt", folder / "d.txt.gz",
                                   folder / "sub" / "c.txt"]
    assert list(read_sentences(str(folder), "tokenized")) == [
        ["first", "file"], ["second", "file"], ["fourth", "file", "gz"], ["third", "file"]]


def test_globs_expand_to_matching_files_only(tmp_path: Path) -> None:
    write(tmp_path / "news.en-00002-of-00100", "two\n")
    write(tmp_path / "news.en-00001-of-00100", "one\n")
    write(tmp_path / "news.en.heldout-00000-of-00050", "held\n")
    (tmp_path / "news.en-dir-of-00100").mkdir()  # a folder matching the glob is not a file
    pattern = str(tmp_path / "news.en-*-of-00100")
    assert expand(pattern) == [tmp_path / "news.en-00001-of-00100",
                               tmp_path / "news.en-00002-of-00100"]
    assert list(read_sentences(pattern, "tokenized")) == [["one"], ["two"]]


@pytest.mark.parametrize("name", ["missing.txt", "missing_dir/", "nothing-*.txt"])
def test_missing_paths_are_a_one_line_data_error(tmp_path: Path, name: str) -> None:
    (tmp_path / "empty_dir").mkdir()
    for path in (str(tmp_path / name), str(tmp_path / "empty_dir")):
        with pytest.raises(DataError) as error:
            expand(path)
        message = str(error.value)
        assert "\n" not in message
        assert message.startswith(path) and "no corpus files found" in message
    with pytest.raises(DataError):
        list(read_sentences(str(tmp_path / name), "tokenized"))


def test_an_existing_file_or_folder_with_glob_characters_is_read_as_named(tmp_path: Path
                                                                         ) -> None:
    """``file[1].txt`` was read as a glob (matching ``file1.txt``): no corpus files found."""
    literal = write(tmp_path / "file[1].txt", "literal file\n")
    assert expand(str(literal)) == [literal]
    assert list(read_sentences(str(literal), "tokenized")) == [["literal", "file"]]
    folder = tmp_path / "shard[s]"
    write(folder / "a.txt", "in the folder\n")
    assert list(read_sentences(str(folder), "tokenized")) == [["in", "the", "folder"]]
    write(tmp_path / "file1.txt", "glob match\n")  # a glob still matches when nothing is named
    assert expand(str(tmp_path / "file[12].txt")) == [tmp_path / "file1.txt"]


# ----------------------------------------------------------------- preparation


@pytest.fixture()
def sources(tmp_path: Path) -> dict[str, str]:
    write(tmp_path / "one.txt", "a b c\nb c\nc d\n")  # sentences 1-3
    write(tmp_path / "two.txt", "c a\ne f g h i j k\nonly_heldout x\n")  # sentences 4-6
    write(tmp_path / "eval.txt", "a only_eval\n\nb\n")
    return {"one": str(tmp_path / "one.txt"), "two": str(tmp_path / "two.txt"),
            "eval": str(tmp_path / "eval.txt")}


def prepare(sources: dict[str, str], directory: Path, **kwargs: int) -> PreparedCorpus:
    train = [{"path": sources["one"], "format": "tokenized"},
             {"path": sources["two"], "format": "tokenized"}]
    evaluation = {"ptb_test": {"path": sources["eval"], "format": "tokenized"}}
    return prepare_corpus(train, evaluation, directory, **kwargs)


def test_heldout_every_nth_sentence_across_sources(sources, tmp_path: Path) -> None:
    corpus = prepare(sources, tmp_path / "prepared", heldout_every=3)
    assert decode(corpus, "train") == [["a", "b", "c"], ["b", "c"], ["c", "a"],
                                       ["e", "f", "g", "h", "i", "j", "k"]]
    assert decode(corpus, "heldout") == [["c", "d"], ["only_heldout", "x"]]
    assert decode(corpus, "ptb_test") == [["a", "only_eval"], ["b"]]
    assert corpus.splits() == ["heldout", "ptb_test", "train"]
    summary = json.loads((tmp_path / "prepared" / "summary.json").read_text())
    assert summary == {"tokens": {"train": 14, "heldout": 4, "ptb_test": 3},
                       "types": len(corpus.types), "excluded": {}}


def test_heldout_every_zero_keeps_everything_in_train(sources, tmp_path: Path) -> None:
    corpus = prepare(sources, tmp_path / "prepared", heldout_every=0)
    assert len(decode(corpus, "train")) == 6
    assert decode(corpus, "heldout") == []
    assert sentence_spans(corpus.ids("heldout")).shape == (0, 2)


def test_long_sentences_are_cut_into_pieces(sources, tmp_path: Path) -> None:
    corpus = prepare(sources, tmp_path / "prepared", heldout_every=3, max_sentence_length=3)
    # the 7-token sentence (number 5) is cut 3 + 3 + 1; heldout numbering counts the original
    assert decode(corpus, "train") == [["a", "b", "c"], ["b", "c"], ["c", "a"],
                                       ["e", "f", "g"], ["h", "i", "j"], ["k"]]
    assert decode(corpus, "heldout") == [["c", "d"], ["only_heldout", "x"]]
    corpus = prepare(sources, tmp_path / "prepared2", heldout_every=100, max_sentence_length=1)
    assert all(len(s) == 1 for s in decode(corpus, "train"))
    assert sum(1 for _ in decode(corpus, "train")) == 18


def test_counts_come_from_the_training_split_only(sources, tmp_path: Path) -> None:
    corpus = prepare(sources, tmp_path / "prepared", heldout_every=3)
    counts = dict(zip(corpus.types, corpus.counts.tolist(), strict=True))
    assert counts["c"] == 3  # + 1 in heldout, not counted
    assert counts["a"] == 2 and counts["b"] == 2  # + 1 each in the evaluation set
    assert counts["d"] == 0 and counts["only_heldout"] == 0 and counts["x"] == 0
    assert counts["only_eval"] == 0
    assert corpus.counts.dtype == np.int64
    assert int(corpus.counts.sum()) == 14
    loaded = PreparedCorpus.load(tmp_path / "prepared")
    assert loaded.types == corpus.types
    np.testing.assert_array_equal(loaded.counts, corpus.counts)
    np.testing.assert_array_equal(loaded.ids("train"), corpus.ids("train"))


def test_prepared_corpus_errors(sources, tmp_path: Path) -> None:
    corpus = prepare(sources, tmp_path / "prepared", heldout_every=3)
    with pytest.raises(DataError, match="was not prepared"):
        corpus.ids("wsj_test")
    with pytest.raises(DataError, match="not a prepared corpus"):
        PreparedCorpus.load(tmp_path / "nowhere")
    (tmp_path / "prepared" / "train.npy").write_bytes(b"\x93NUMPY")  # truncated
    with pytest.raises(DataError, match=r"train\.npy: damaged .*; remove .*prepared to prepare "
                                        r"the corpus again"):
        corpus.ids("train")
    (tmp_path / "prepared" / "counts.npy").write_bytes(b"")  # numpy: EOFError, not Ctrl-D
    with pytest.raises(DataError, match=r"counts\.npy: damaged"):
        PreparedCorpus.load(tmp_path / "prepared")


def test_a_prepared_dir_that_is_a_file_is_one_line(sources, tmp_path: Path) -> None:
    """It was ``[Errno 17] File exists``."""
    for folder, where in ((Path(sources["one"]), ""),
                          (Path(sources["one"]) / "sub", f"{sources['one']} is ")):
        with pytest.raises(DataError) as info:
            prepare(sources, folder)
        assert str(info.value) == (f"{folder}: {where}a file, not a folder; a prepared corpus "
                                   f"is a folder (corpus.prepared_dir names a new or empty one, "
                                   f"or one prepared before)")


@pytest.mark.parametrize("text", ["", "  \n\n\t\n"], ids=["empty", "blank"])
def test_an_evaluation_set_without_sentences_is_named(sources, tmp_path: Path, text: str
                                                      ) -> None:
    """It gave no ``<name>_perplexity`` and no warning."""
    write(Path(sources["eval"]), text)
    with pytest.raises(DataError) as info:
        prepare(sources, tmp_path / "prepared")
    assert str(info.value) == (f"corpus.evaluation ptb_test: no sentences in {sources['eval']} "
                               f"(empty, or blank lines only): no perplexity to measure on it")


def test_an_evaluation_set_of_nul_bytes_is_refused(sources, tmp_path: Path) -> None:
    Path(sources["eval"]).write_bytes(b"\0" * 64 + b"\n")
    with pytest.raises(DataError) as info:
        prepare(sources, tmp_path / "prepared")
    assert str(info.value) == f"{sources['eval']}:1: {NUL}"


def test_types_with_unusual_characters_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path / "u.txt", "caf\u00e9 na\u00efve \u2014 \U0001f600 <S> <UNK>\n")
    corpus = prepare_corpus([{"path": str(path), "format": "tokenized"}], {},
                            tmp_path / "prepared", heldout_every=0)
    assert PreparedCorpus.load(tmp_path / "prepared").types == corpus.types
    assert decode(corpus, "train") == [["caf\u00e9", "na\u00efve", "\u2014", "\U0001f600", "<S>",
                                        "<UNK>"]]


# ----------------------------------------------------------------- vocabulary


def test_vocabulary_specials_then_frequency_then_first_seen(sources, tmp_path: Path) -> None:
    corpus = prepare(sources, tmp_path / "prepared", heldout_every=3)
    vocab = SoftmaxVocabulary.from_corpus(corpus, size=100)
    # c: 3; a, b: 2 (a seen first); e..k: 1 in order; unseen-in-train types left out
    assert vocab.words == ["<S>", "</S>", "<UNK>", "c", "a", "b", "e", "f", "g", "h", "i", "j",
                           "k"]
    assert SoftmaxVocabulary.from_corpus(corpus, size=5).words == ["<S>", "</S>", "<UNK>", "c",
                                                                   "a"]
    assert SoftmaxVocabulary.from_corpus(corpus, size=100, min_count=2).words == [
        "<S>", "</S>", "<UNK>", "c", "a", "b"]
    assert SoftmaxVocabulary.from_corpus(corpus, size=2).words == ["<S>", "</S>", "<UNK>"]
    unk = vocab.index["<UNK>"]
    mapped = dict(zip(corpus.types, vocab.type_map(corpus.types).tolist(), strict=True))
    assert mapped["c"] == 3 and mapped["only_heldout"] == unk and mapped["only_eval"] == unk
    vocab.save(tmp_path / "vocab.txt")
    assert (tmp_path / "vocab.txt").read_text().split("\n")[:4] == ["<S>", "</S>", "<UNK>", "c"]
    assert SoftmaxVocabulary.load(tmp_path / "vocab.txt").words == vocab.words


def test_literal_special_tokens_in_the_corpus_are_not_duplicated(tmp_path: Path) -> None:
    path = write(tmp_path / "u.txt", "<UNK> <UNK> <UNK> <S> w w x\n")
    corpus = prepare_corpus([{"path": str(path), "format": "tokenized"}], {},
                            tmp_path / "prepared", heldout_every=0)
    vocab = SoftmaxVocabulary.from_corpus(corpus, size=100)
    assert vocab.words == ["<S>", "</S>", "<UNK>", "w", "x"]
    assert vocab.type_map(corpus.types).tolist() == [2, 0, 3, 4]


# ----------------------------------------------------------------- spans and batches


def test_sentence_spans() -> None:
    assert sentence_spans(np.array([], dtype=np.int32)).shape == (0, 2)
    assert sentence_spans(np.array([-1, -1], dtype=np.int32)).shape == (0, 2)
    spans = sentence_spans(np.array([3, 4, -1, 5, -1, -1, 6, 7, 8, -1], dtype=np.int32))
    assert spans.tolist() == [[0, 2], [3, 4], [6, 9]]


@pytest.fixture()
def loader_corpus(tmp_path: Path) -> PreparedCorpus:
    words = ["w" + str(i % 9) for i in range(200)]
    lines = [" ".join(words[i : i + 1 + i % 6]) for i in range(40)]
    path = write(tmp_path / "train.txt", "\n".join(lines) + "\nrare_word\n")
    return prepare_corpus([{"path": str(path), "format": "tokenized"}], {},
                          tmp_path / "prepared", heldout_every=5)


def test_collate_matches_the_corpus(loader_corpus: PreparedCorpus) -> None:
    vocab = SoftmaxVocabulary(["<S>", "</S>", "<UNK>", "w1", "w2", "w3"])
    loader = LmLoader(loader_corpus, "train", vocab, LOADER, seed=0, train=True)
    sentences = decode(loader_corpus, "train")
    for batch in loader.batches(0):
        mask, inputs = batch.masks["tokens"], batch.inputs
        width = mask.shape[1]
        assert inputs["char_ids"].shape == (len(batch.indices), width, 50)
        assert batch.num_tokens == sum(len(sentences[i]) for i in batch.indices)
        for row, index in enumerate(batch.indices):
            tokens = sentences[index]
            n = len(tokens)
            assert mask[row].tolist() == [True] * n + [False] * (width - n)
            expected = [vocab.index.get(t, 2) for t in tokens] + [0] * (width - n)
            assert inputs["targets"][row].tolist() == expected
            chars = inputs["char_ids"][row].numpy()
            np.testing.assert_array_equal(chars[:n], np.stack([token_to_ids(t) for t in tokens]))
            assert not chars[n:].any()


def test_loader_is_deterministic_per_epoch_and_shuffles_across_epochs(loader_corpus) -> None:
    vocab = SoftmaxVocabulary.from_corpus(loader_corpus, size=10)

    def order(loader: LmLoader, epoch: int) -> list[list[int]]:
        return [batch.indices for batch in loader.batches(epoch)]

    loader = LmLoader(loader_corpus, "train", vocab, LOADER, seed=4, train=True)
    again = LmLoader(loader_corpus, "train", vocab, LOADER, seed=4, train=True)
    assert order(loader, 0) == order(loader, 0) == order(again, 0)
    assert order(loader, 1) == order(again, 1)
    assert order(loader, 0) != order(loader, 1)
    every = sorted(i for group in order(loader, 1) for i in group)
    assert every == list(range(len(loader.spans)))  # an epoch covers every sentence once
    other_seed = LmLoader(loader_corpus, "train", vocab, LOADER, seed=5, train=True)
    assert order(other_seed, 0) != order(loader, 0)
    heldout = LmLoader(loader_corpus, "heldout", vocab, LOADER, seed=4, train=False)
    assert order(heldout, 0) == order(heldout, 3)  # evaluation order does not change


def test_batches_per_epoch_and_max_eval_sentences(loader_corpus) -> None:
    vocab = SoftmaxVocabulary.from_corpus(loader_corpus, size=10)
    settings = {**LOADER, "batches_per_epoch": 3, "max_eval_sentences": 4}
    full = LmLoader(loader_corpus, "train", vocab, LOADER, seed=1, train=True)
    limited = LmLoader(loader_corpus, "train", vocab, settings, seed=1, train=True)
    assert len(full) > 3 and len(limited) == 3
    for epoch in range(3):
        batches = [b.indices for b in limited.batches(epoch)]
        assert len(batches) == 3
        assert batches == [b.indices for b in full.batches(epoch)][:3]
    seen = [sorted(i for b in limited.batches(e) for i in b.indices) for e in range(3)]
    assert seen[0] != seen[1], "each epoch should draw another subset"
    heldout = LmLoader(loader_corpus, "heldout", vocab, settings, seed=1, train=False)
    assert len(heldout.spans) == 4
    assert sorted(i for b in heldout.batches(0) for i in b.indices) == [0, 1, 2, 3]
    heldout_all = LmLoader(loader_corpus, "heldout", vocab, LOADER, seed=1, train=False)
    assert len(heldout_all.spans) == 8
    train_not_cut = LmLoader(loader_corpus, "train", vocab, settings, seed=1, train=True)
    assert len(train_not_cut.spans) == len(full.spans) == 33


def test_max_tokens_bounds_padded_batch_size(loader_corpus) -> None:
    vocab = SoftmaxVocabulary.from_corpus(loader_corpus, size=10)
    settings = {**LOADER, "batch_size": 100, "max_tokens": 12}
    loader = LmLoader(loader_corpus, "train", vocab, settings, seed=0, train=True)
    for batch in loader.batches(0):
        assert batch.masks["tokens"].numel() <= 12 or len(batch) == 1


def test_special_tokens_in_the_corpus_do_not_cost_vocabulary_slots(tmp_path):
    from elmo_experiments.bilm.pretraining.corpus import prepare_corpus
    from elmo_experiments.bilm.pretraining.lm_data import SoftmaxVocabulary

    text = tmp_path / "t.txt"
    text.write_text("<UNK> <UNK> <UNK> a a a b b c\n<S> a b c d\n")
    corpus = prepare_corpus([{"path": str(text), "format": "tokenized"}], {},
                            tmp_path / "prepared", heldout_every=0)
    vocab = SoftmaxVocabulary.from_corpus(corpus, size=6)
    assert vocab.words == ["<S>", "</S>", "<UNK>", "a", "b", "c"]


def test_a_prepared_corpus_is_reused_only_for_the_same_sources(tmp_path):
    from elmo_experiments.bilm.pretraining.corpus import FINGERPRINT, load_or_prepare
    from elmo_experiments.errors import DataError

    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("a b c\nd e\n")
    two.write_text("x y\n")
    folder = tmp_path / "prepared"
    first = load_or_prepare([{"path": str(one), "format": "tokenized"}], {}, folder, 0)
    assert (folder / FINGERPRINT).is_file() and first.types == ["a", "b", "c", "d", "e"]
    again = load_or_prepare([{"path": str(one), "format": "tokenized"}], {}, folder, 0)
    assert again.types == first.types
    with pytest.raises(DataError, match="other sources or settings"):
        load_or_prepare([{"path": str(two), "format": "tokenized"}], {}, folder, 0)
    with pytest.raises(DataError, match="other sources or settings"):
        load_or_prepare([{"path": str(one), "format": "tokenized"}], {}, folder, 7)
    (folder / FINGERPRINT).unlink()  # an unfinished preparation is simply redone
    redone = load_or_prepare([{"path": str(two), "format": "tokenized"}], {}, folder, 0)
    assert redone.types == ["x", "y"]


@pytest.mark.parametrize("name", ["fingerprint.json", "manifest.json"])
def test_a_damaged_corpus_json_is_one_line_naming_the_file_and_line(tmp_path, name):
    from elmo_experiments.bilm.pretraining.corpus import load_or_prepare

    source = [{"path": str(write(tmp_path / "one.txt", "a b c\n")), "format": "tokenized"}]
    folder = tmp_path / "prepared"
    load_or_prepare(source, {}, folder, 0)
    (folder / name).write_text('{"train":\n')
    with pytest.raises(DataError) as info:
        load_or_prepare(source, {}, folder, 0)
    assert str(info.value) == (f"{folder / name}:2: not valid JSON (Expecting value); the "
                               f"file is damaged; remove {folder} to prepare the corpus again")


def test_a_damaged_summary_or_array_is_one_line_naming_the_file(sources, tmp_path: Path) -> None:
    from elmo_experiments.bilm.pretraining.corpus import read_prepared_json

    folder = tmp_path / "prepared"
    prepare(sources, folder)
    (folder / "summary.json").write_text("")
    with pytest.raises(DataError) as info:
        read_prepared_json(folder / "summary.json")
    assert str(info.value) == (f"{folder / 'summary.json'}:1: not valid JSON (Expecting "
                               f"value); the file is damaged; remove {folder} to prepare the "
                               f"corpus again")
    (folder / "counts.npy").write_bytes(b"\x93NUMPY")
    with pytest.raises(DataError, match=rf"^{folder / 'counts.npy'}: damaged \(.*\); remove "
                                        rf"{folder} to prepare the corpus again$"):
        PreparedCorpus.load(folder)
