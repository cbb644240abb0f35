"""Raw-text tokenisation and sentence splitting (spaCy blank English, rules only)."""

from __future__ import annotations

from elmo_experiments.data.tokenizers import split_sentences, tokenize


def test_tokenize_splits_punctuation_and_drops_whitespace() -> None:
    assert tokenize("Velmar Quist visited  Dunhaven,\tthen left.\n") == [
        "Velmar", "Quist", "visited", "Dunhaven", ",", "then", "left", "."]


def test_tokenize_splits_clitics_and_keeps_abbreviations() -> None:
    assert tokenize("Dr. Orla didn't go.") == ["Dr.", "Orla", "did", "n't", "go", "."]


def test_tokenize_empty_and_blank_text() -> None:
    assert tokenize("") == []
    assert tokenize("  \n\t ") == []


def test_split_sentences() -> None:
    text = "Kestrel Corp rose 3 %. Brannock fell!  Did Zeph win?\n\nYes"
    assert split_sentences(text) == [
        ["Kestrel", "Corp", "rose", "3", "%", "."],
        ["Brannock", "fell", "!"],
        ["Did", "Zeph", "win", "?"],
        ["Yes"],
    ]


def test_split_sentences_never_returns_empty_sentences() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n ") == []
    sentences = split_sentences("One.  \n\n  Two.   ")
    assert sentences == [["One", "."], ["Two", "."]]
    assert all(sentences)


def test_tokens_of_all_sentences_equal_the_tokenisation() -> None:
    text = "Ulm is far. Is it? Yes: 12,000 km away."
    assert [t for s in split_sentences(text) for t in s] == tokenize(text)
