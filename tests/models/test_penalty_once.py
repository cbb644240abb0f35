"""The training objective holds the ELMo mixes' λ·||w||² exactly once, for each of the six
task models: the trainer adds it (``regularization_penalty()``), the model's loss does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.contracts import regularization_penalty
from elmo_experiments.testing import assemble, check_penalty_once, make_batch

CASES = {
    "ner": [],
    "sst5": ["dataset_reader.min_phrase_length=6"],
    "snli": [],
    "squad": [],
    "srl": [],
    "coref": [],
}


@pytest.fixture
def sample_env(monkeypatch: pytest.MonkeyPatch, tiny_bilm_dir: Path) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
    monkeypatch.setenv("ELMO_SIZE", "cpu")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_objective_holds_the_mix_penalty_once(name: str, sample_env: None) -> None:
    reader, vocab, model, instances = assemble(name, CASES[name])
    assert check_penalty_once(model, make_batch(reader, vocab, instances[:4])) > 0


def test_a_model_without_mixes_has_no_penalty(sample_env: None) -> None:
    reader, vocab, model, instances = assemble("ner_baseline")
    assert check_penalty_once(model, make_batch(reader, vocab, instances[:4])) == 0


def test_a_model_that_adds_the_penalty_itself_fails_the_check(sample_env: None) -> None:
    reader, vocab, model, instances = assemble("ner")
    forward = model.forward

    def twice(**batch):  # the pre-contract habit: the model adds the penalty to its loss
        output = forward(**batch)
        penalty = regularization_penalty(model)  # None while λ is 0
        if penalty is not None:
            output["loss"] = output["loss"] + penalty
        return output

    model.forward = twice
    with pytest.raises(AssertionError, match="adds a penalty itself"):
        check_penalty_once(model, make_batch(reader, vocab, instances[:4]))


def test_the_objective_finds_every_modules_own_penalty_once() -> None:
    import torch

    from elmo_experiments.contracts import objective

    class Term(torch.nn.Module):
        def __init__(self, value: float) -> None:
            super().__init__()
            self.value = value

        def penalty(self) -> torch.Tensor:
            return torch.tensor(self.value)

    class Model(torch.nn.Module):  # its own term, a child's, and a grandchild's
        def __init__(self) -> None:
            super().__init__()
            self.a = Term(1.0)
            self.inner = torch.nn.Sequential(Term(2.0), torch.nn.Linear(1, 1), Term(0.25))
            self.shared = self.a  # a module reached twice counts once

        def penalty(self) -> torch.Tensor:
            return torch.tensor(4.0)

    assert objective(Model(), {"loss": torch.tensor(0.5)}).item() == 7.75
    assert regularization_penalty(torch.nn.Linear(2, 2)) is None
