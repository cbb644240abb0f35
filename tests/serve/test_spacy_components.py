"""The spaCy components: ``elmo`` gives the vectors ``elmo-exp embed`` writes (average, one
layer, a mix), through ``nlp.pipe`` in batches; ``elmo_tagger`` sets NER entities with their
probabilities, SRL and coreference span groups, as the served model predicts them."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
import spacy

import elmo_experiments.spacy_components  # noqa: F401  (registers the factories from a checkout)
from elmo_experiments.bilm.embed import embed_file
from elmo_experiments.serve.models import Limits, ServedModel

TEXTS = ["The cat sat on the mat.", "John Smith lives in Paris, France.", "Short."]


@pytest.fixture(scope="module")
def reference(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> list[np.ndarray]:
    """``elmo-exp embed``'s layers for the blank English tokens of TEXTS."""
    nlp = spacy.blank("en")
    folder = tmp_path_factory.mktemp("spacy_embed")
    text = folder / "in.txt"
    text.write_text("".join(" ".join(t.text for t in nlp(s)) + "\n" for s in TEXTS))
    embed_file(text, folder / "out.hdf5", str(tiny_bilm_dir), progress=False)
    with h5py.File(folder / "out.hdf5") as handle:
        return [handle[str(i)][()] for i in range(len(TEXTS))]


def test_elmo_vectors_equal_embeds(tiny_bilm_dir: Path, reference: list[np.ndarray]) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "batch_size": 2})
    docs = list(nlp.pipe(TEXTS))
    for doc, layers in zip(docs, reference, strict=True):
        assert doc.tensor.shape == (len(doc), 8)
        np.testing.assert_allclose(doc.tensor, layers.mean(axis=0), atol=1e-5)
        np.testing.assert_allclose(doc[1].vector, layers.mean(axis=0)[1], atol=1e-5)
        np.testing.assert_allclose(doc[0:2].vector, layers.mean(axis=0)[0:2].mean(axis=0),
                                   atol=1e-5)
        assert doc[0].has_vector and doc.vector.shape == (8,)
    top = spacy.blank("en")
    top.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "layers": [2]})
    np.testing.assert_allclose(top(TEXTS[0]).tensor, reference[0][2], atol=1e-5)
    both = spacy.blank("en")
    both.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "layers": [0, 2]})
    assert both(TEXTS[0]).tensor.shape == (7, 16)
    mixed = spacy.blank("en")
    mixed.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "mix": [0.2, 0.3, 0.5],
                                   "gamma": 2.0})
    want = 2.0 * np.tensordot(np.array([0.2, 0.3, 0.5]), reference[1], axes=1)
    np.testing.assert_allclose(mixed(TEXTS[1]).tensor, want, atol=1e-5)
    assert mixed("").tensor.shape == (0, 8)


def test_an_empty_doc_gets_empty_tensors_and_zero_vectors_not_nan(tiny_bilm_dir: Path) -> None:
    import warnings

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "layers": [0, 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "Mean of empty slice" is a failure here
        doc = nlp("")
        assert doc.tensor.shape == (0, 16)
        assert doc.vector.shape == (16,) and not np.isnan(doc.vector).any()
        assert not doc.vector.any()
        full = nlp("Hello there .")
        assert full[1:1].vector.shape == (16,) and not full[1:1].vector.any()


def test_bad_settings_are_refused(tiny_bilm_dir: Path) -> None:
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="one weight per layer"):
        nlp.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "mix": [1.0]})
    with pytest.raises(ValueError, match="layer indices"):
        nlp.add_pipe("elmo", name="e2", config={"weights": str(tiny_bilm_dir), "layers": [5]})


@pytest.mark.parametrize(("config", "error"), [
    ({"batch_size": 0}, "batch_size must be a positive integer, got 0"),
    ({"batch_size": -1}, "batch_size must be a positive integer, got -1"),
    ({"mix": [1e39, 1.0, 1.0]}, "mix and gamma must be finite float32 numbers"),
    ({"mix": [1.0, 1.0, 1.0], "gamma": 1e39}, "mix and gamma must be finite float32 numbers"),
    ({"gamma": 5.0}, "gamma scales a mix: give mix too, or leave gamma out"),
    ({"layers": [0], "gamma": 5.0}, "gamma scales a mix")])
def test_sizes_and_numbers_out_of_range_are_refused_when_added(
        tiny_bilm_dir: Path, config: dict, error: str) -> None:
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=f"^elmo: {error}"):
        nlp.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), **config})


def test_a_mix_whose_vectors_overflow_is_refused(tiny_bilm_dir: Path) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"weights": str(tiny_bilm_dir), "mix": [1e30, 1e30, 1e30],
                                 "gamma": 1e30})
    with pytest.raises(ValueError, match=r"^elmo: the mixed vectors overflow float32"):
        nlp("a b")


def test_whitespace_tokens_stay_out_of_the_biLM(tiny_bilm_dir: Path) -> None:
    """The words of "a   b" get the vectors ElmoEmbedder gives ["a", "b"]; the space token a
    zero vector, and the doc vector averages the words."""
    from elmo_experiments.bilm.elmo_embedder_compat import ElmoEmbedder

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"weights": str(tiny_bilm_dir)})
    doc = nlp("a   b")
    assert [t.is_space for t in doc] == [False, True, False]
    words = ElmoEmbedder(str(tiny_bilm_dir)).embed_sentence(["a", "b"]).mean(axis=0)
    np.testing.assert_allclose(doc.tensor[[0, 2]], words, atol=1e-6)
    assert not doc.tensor[1].any()
    np.testing.assert_allclose(doc.vector, words.mean(axis=0), atol=1e-6)


def test_elmo_tagger_tags_a_doc_with_a_very_long_token(archive_of) -> None:
    """A doc is not a request: a 300-character URL does not stop it being tagged."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_tagger", config={"archive": str(archive_of("ner"))})
    doc = nlp("John Smith visited https://example.org/" + "x" * 300 + " today .")
    assert len(doc) == 6 and max(len(t) for t in doc) > 300  # tagged: no RequestError


@pytest.mark.parametrize("task", ["ner", "srl", "coref", "sst5"])
def test_elmo_tagger_names_a_merged_token_with_a_space(archive_of, task: str) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_tagger", config={"archive": str(archive_of(task))})
    doc = nlp.make_doc("She moved to New York today .")
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[3:5])
    with pytest.raises(ValueError) as error:
        nlp.get_pipe("elmo_tagger")(doc)
    assert str(error.value) == (
        f"elmo_tagger: token 3 'New York' holds a space (a merged span?), and a {task} model "
        f"takes tokens without spaces: split it, or embed such docs with the elmo component")


def test_elmo_tagger_sets_entities_with_their_probabilities(archive_of) -> None:
    archive = archive_of("ner")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo_tagger", config={"archive": str(archive)})
    served = ServedModel("ner", archive)
    texts = ["Lake Oron Tuesday. John Smith lives in Paris.", "Tomas Okafor said ."]
    for doc in nlp.pipe(texts, batch_size=2):
        expected = served.predict({"instances": [{"tokens": [t.text for t in s]}
                                                 for s in doc.sents]}, Limits())["results"]
        spans = [(s["type"], s["text"], s["score"]) for records in expected
                 for record in records for s in record["spans"]]
        assert [(e.label_, e.text, e._.elmo_score) for e in doc.ents] == spans
        assert doc.spans["elmo_ents"].attrs["scores"] == [score for *_, score in spans]


def test_elmo_tagger_span_groups_for_srl_and_coref(archive_of) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_tagger", name="srl", config={"archive": str(archive_of("srl"))})
    nlp.add_pipe("elmo_tagger", name="coref", config={"archive": str(archive_of("coref"))})
    doc = nlp("Anna gave Tom the book because she liked him.")
    frames = [key for key in doc.spans if key.startswith("srl_")]
    for key in frames:
        group = doc.spans[key]
        assert group[0].label_ == "V" and group.attrs["predicate"] == group[0].start
    clusters = [key for key in doc.spans if key.startswith("coref_clusters_")]
    assert all(len(doc.spans[key]) >= 1 for key in clusters)
    with pytest.raises(ValueError, match="pairs"):
        nlp.add_pipe("elmo_tagger", name="qa", config={"archive": str(archive_of("squad"))})
