"""``-o`` overrides: JSON objects deep-merge, ``a.b.c=value`` sets one key, applied in order."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from elmo_experiments.config.overrides import apply_overrides, deep_merge
from elmo_experiments.errors import ConfigError

BASE: dict[str, Any] = {
    "model": {
        "type": "crf_tagger",
        "encoder": {"type": "lstm", "hidden_sizes": [200, 100]},
        "dropout": 0.5,
    },
    "trainer": {"num_epochs": 10, "optimizer": {"type": "adam", "lr": 0.001}},
    "data_loader": {"batch_size": 64},
}


def apply(*overrides: str) -> dict[str, Any]:
    return apply_overrides(BASE, list(overrides), source="test.jsonnet")


def test_no_overrides_returns_an_equal_copy() -> None:
    result = apply()
    assert result == BASE
    assert result is not BASE


def test_json_object_merges_deeply() -> None:
    result = apply('{"trainer": {"num_epochs": 1, "optimizer": {"lr": 0.1}}}')
    assert result["trainer"] == {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.1}}
    assert result["model"] == BASE["model"]


def test_json_object_replaces_lists_and_adds_keys() -> None:
    result = apply('  {"model": {"encoder": {"hidden_sizes": [8]}}, "random_seed": 1}')
    assert result["model"]["encoder"] == {"type": "lstm", "hidden_sizes": [8]}
    assert result["random_seed"] == 1


def test_json_object_can_replace_an_object_with_a_scalar() -> None:
    assert apply('{"data_loader": null}')["data_loader"] is None


def test_dotted_set_parses_json_values() -> None:
    result = apply(
        "trainer.num_epochs=1",
        "model.dropout=0.25",
        "trainer.optimizer.type=sgd",
        'model.encoder.hidden_sizes=[4, 4]',
        "data_loader.shuffle=false",
        "trainer.patience=null",
    )
    assert result["trainer"]["num_epochs"] == 1
    assert result["model"]["dropout"] == 0.25
    assert result["trainer"]["optimizer"]["type"] == "sgd"
    assert result["model"]["encoder"]["hidden_sizes"] == [4, 4]
    assert result["data_loader"]["shuffle"] is False
    assert result["trainer"]["patience"] is None


def test_dotted_set_keeps_quoted_json_strings_and_equals_signs() -> None:
    result = apply('model.label_namespace="10"', "trainer.name=a=b", " trainer.x = 3 ")
    assert result["model"]["label_namespace"] == "10"
    assert result["trainer"]["name"] == "a=b"
    assert result["trainer"]["x"] == 3


def test_dotted_set_creates_missing_objects() -> None:
    result = apply("vocabulary.min_count.tokens=2")
    assert result["vocabulary"] == {"min_count": {"tokens": 2}}


def test_list_index() -> None:
    result = apply("model.encoder.hidden_sizes.1=7")
    assert result["model"]["encoder"]["hidden_sizes"] == [200, 7]


def test_list_index_into_nested_object() -> None:
    config = {"trainer": {"callbacks": [{"type": "wandb", "mode": "offline"}]}}
    result = apply_overrides(config, ["trainer.callbacks.0.mode=disabled"], "t")
    assert result["trainer"]["callbacks"] == [{"type": "wandb", "mode": "disabled"}]


@pytest.mark.parametrize("index", ["2", "10", "-1", "first"])
def test_bad_list_index(index: str) -> None:
    with pytest.raises(ConfigError) as info:
        apply(f"model.encoder.hidden_sizes.{index}=7")
    assert len(info.value.problems) == 1
    message = str(info.value)
    assert message.startswith("test.jsonnet: model.encoder.hidden_sizes.")
    assert "out of range" in message


def test_cannot_descend_into_a_scalar() -> None:
    with pytest.raises(ConfigError, match=r"model\.dropout\.rate: cannot override inside a float"):
        apply("model.dropout.rate=0.1")


@pytest.mark.parametrize("override", ['{"trainer": ', "{trainer: 1}", "{'a': 1}"])
def test_invalid_json(override: str) -> None:
    with pytest.raises(ConfigError) as info:
        apply(override)
    assert len(info.value.problems) == 1
    assert "invalid JSON" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("override", ["{\"a\": " + "[" * 100_000 + "]" * 100_000 + "}",
                                      "model.x=" + "[" * 100_000 + "]" * 100_000])
def test_json_nested_too_deeply(override: str) -> None:
    with pytest.raises(ConfigError) as info:
        apply(override)
    assert info.value.problems == [f"-o {override!r}: JSON nested too deeply to read (arrays or "
                                   f"objects thousands of levels deep)"]


@pytest.mark.parametrize("override", ["trainer.num_epochs", "=3", ""])
def test_neither_json_nor_assignment(override: str) -> None:
    with pytest.raises(ConfigError, match="expected JSON or path=value"):
        apply(override)


def test_overrides_apply_in_order() -> None:
    assert apply("trainer.num_epochs=1", "trainer.num_epochs=2")["trainer"]["num_epochs"] == 2
    result = apply('{"trainer": {"num_epochs": 5}}', "trainer.num_epochs=3")
    assert result["trainer"]["num_epochs"] == 3
    result = apply("trainer.num_epochs=3", '{"trainer": {"num_epochs": 5}}')
    assert result["trainer"]["num_epochs"] == 5


def test_later_override_sees_earlier_one() -> None:
    result = apply('{"model": {"encoder": {"hidden_sizes": [1, 2, 3]}}}',
                   "model.encoder.hidden_sizes.2=9")
    assert result["model"]["encoder"]["hidden_sizes"] == [1, 2, 9]


def test_base_config_is_not_mutated() -> None:
    before = copy.deepcopy(BASE)
    apply('{"trainer": {"optimizer": {"lr": 5}}}', "model.encoder.hidden_sizes.0=1",
          "model.encoder.extra.deep=1")
    assert before == BASE


def test_deep_merge_does_not_alias_update_values() -> None:
    update = {"a": {"b": [1]}}
    merged = deep_merge({}, update)
    merged["a"]["b"].append(2)
    assert update == {"a": {"b": [1]}}
