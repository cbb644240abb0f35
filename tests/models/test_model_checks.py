"""Every shipped task model passes the shared model checks (``elmo_experiments.testing``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from elmo_experiments.testing import check_model

# a layer norm in the mix pools its statistics over the batch's tokens (as AllenNLP's does),
# so the one-by-one check runs the ELMo configs without it
PLAIN_MIXES = ['model.token_embedders.elmo.mixes=[{"l2": 0.001}, {"l2": 0.001}]']
CASES = {
    "ner_baseline": ([], []),
    "ner": ([], []),
    "sst5_baseline": (["dataset_reader.min_phrase_length=6"], []),
    "sst5": (["dataset_reader.min_phrase_length=6"], []),
    "snli_baseline": ([], []),
    "snli": ([], PLAIN_MIXES),
    "squad_baseline": ([], []),
    "squad": ([], []),  # no layer norm in SQuAD's mixes
    "srl_baseline": ([], []),
    "srl": ([], []),
    "coref_baseline": ([], []),
    "coref": ([], []),
}


@pytest.fixture
def sample_env(monkeypatch: pytest.MonkeyPatch, tiny_bilm_dir: Path) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
    monkeypatch.setenv("ELMO_SIZE", "cpu")


@pytest.mark.parametrize("name", sorted(CASES))
def test_shipped_model_passes_the_model_checks(name: str, sample_env: None,
                                               tmp_path: Path) -> None:
    overrides, batch_overrides = CASES[name]
    check_model(name, tmp_path, overrides, batch_overrides)


# BiDAF as Seo et al. (2017) built it, from the same config: LSTMs, two highway layers, no
# projection after the attention, no self-attention
BIDAF = ["model.highway_layers=2", "model.attention_projection_dim=null",
         "model.self_attention=null",
         *(f'model.{name}={{"type": "lstm", "hidden_sizes": [8], "input_dropout": 0.2}}'
           for name in ("phrase_encoder", "modeling_encoder", "span_end_encoder"))]


def test_the_original_bidaf_passes_the_model_checks(sample_env: None, tmp_path: Path) -> None:
    check_model("squad_baseline", tmp_path, BIDAF)


def test_the_contract_checks_catch_a_reader_and_a_model_that_break_them() -> None:
    from typing import ClassVar

    import torch

    from elmo_experiments.testing import check_reader, check_task_model

    class NoFields:
        def read(self, path: str) -> list[dict]:
            return [{"tokens": ["a"]}]

    class Fields(NoFields):
        fields: ClassVar[dict] = {"tokens": None}

    with pytest.raises(AssertionError, match="NoFields: no fields or read"):
        check_reader(NoFields(), [{"tokens": ["a"]}])
    with pytest.raises(AssertionError, match=r"instances hold \['tags'\], no fields"):
        check_reader(Fields(), [{"tokens": ["a"], "tags": ["O"]}])
    check_reader(Fields(), [{"tokens": ["a"]}])
    with pytest.raises(AssertionError, match="Linear has no metrics list"):
        check_task_model(torch.nn.Linear(2, 2))
