"""Whole-config validation: every problem at once, each with its dotted path and a did-you-mean."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments.config.registry import Param, Spec, lookup, register, suggest
from elmo_experiments.config.validate import Validator
from elmo_experiments.errors import ConfigError
from elmo_experiments.experiment import Experiment, validate_experiment


def valid_config() -> dict[str, Any]:
    """A small valid NER config (paths are not checked unless a test asks)."""
    return {
        "dataset_reader": {
            "type": "conll2003",
            "tag_label": "ner",
            "coding_scheme": "BIOUL",
            "token_indexers": {
                "tokens": {"type": "single_id", "lowercase_tokens": True},
                "token_characters": {"type": "characters", "min_padding_length": 3},
            },
        },
        "train_data_path": "train.txt",
        "validation_data_path": "dev.txt",
        "model": {
            "type": "crf_tagger",
            "token_embedders": {
                "tokens": {"type": "embedding", "embedding_dim": 50},
                "token_characters": {"type": "character_encoding", "num_filters": 16},
            },
            "encoder": {"type": "lstm", "hidden_sizes": [20], "bidirectional": True},
            "dropout": 0.5,
        },
        "data_loader": {"batch_size": 8},
        "trainer": {
            "num_epochs": 2,
            "validation_metric": "+f1",
            "optimizer": {"type": "adam", "lr": 0.001},
        },
    }


def problems_of(config: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate_experiment(config, source="cfg.jsonnet", **kwargs)
    return info.value.problems


def only_problem(config: dict[str, Any], **kwargs: Any) -> str:
    problems = problems_of(config, **kwargs)
    assert len(problems) == 1, problems
    return problems[0]


def test_valid_config() -> None:
    experiment = validate_experiment(valid_config(), source="cfg.jsonnet")
    assert isinstance(experiment, Experiment)
    assert experiment.model.entry.name == "crf_tagger"
    assert experiment.reader.entry.name == "conll2003"
    encoder = experiment.model.params["encoder"]
    assert isinstance(encoder, Spec)
    assert encoder.path == "model.encoder"
    assert encoder.params["hidden_sizes"] == [20]
    embedders = experiment.model.params["token_embedders"]
    assert embedders["tokens"].path == "model.token_embedders.tokens"
    assert experiment["trainer"]["optimizer"].entry.name == "adam"


def test_unknown_key_with_did_you_mean() -> None:
    config = valid_config()
    encoder = config["model"]["encoder"]
    encoder["hiden_sizes"] = encoder.pop("hidden_sizes")
    problems = problems_of(config)
    assert "model.encoder.hiden_sizes: unknown parameter; did you mean hidden_sizes?" in problems
    assert "model.encoder.hidden_sizes: missing required parameter" in problems
    assert len(problems) == 2


def test_unknown_key_without_close_match() -> None:
    config = valid_config()
    config["trainer"]["zzz"] = 1
    assert only_problem(config) == "trainer.zzz: unknown parameter"


def test_unknown_top_level_key() -> None:
    config = valid_config()
    config["validation_data"] = "dev.txt"
    problem = only_problem(config)
    assert problem == "validation_data: unknown parameter; did you mean validation_data_path?"


def test_unknown_type_with_suggestion() -> None:
    config = valid_config()
    config["model"]["encoder"]["type"] = "lstmm"
    problem = only_problem(config)
    assert problem == "model.encoder.type: unknown seq2seq_encoder type 'lstmm'; did you mean lstm?"


def test_unknown_type_without_suggestion_lists_known() -> None:
    config = valid_config()
    config["trainer"]["optimizer"]["type"] = "zzzzzz"
    problem = only_problem(config)
    assert problem.startswith("trainer.optimizer.type: unknown optimizer type 'zzzzzz' (known: ")
    assert "adam" in problem and "sgd" in problem


def test_missing_type() -> None:
    config = valid_config()
    del config["model"]["encoder"]["type"]
    assert only_problem(config) == "model.encoder.type: missing seq2seq_encoder type"


def test_component_that_is_not_an_object() -> None:
    config = valid_config()
    config["model"]["encoder"] = "lstm"
    problem = only_problem(config)
    assert problem.startswith('model.encoder: expected an object with a "type"')


def test_bool_is_not_an_int() -> None:
    config = valid_config()
    config["data_loader"]["batch_size"] = True
    assert only_problem(config) == "data_loader.batch_size: expected an integer, got True"


def test_float_is_not_an_int() -> None:
    config = valid_config()
    config["trainer"]["num_epochs"] = 2.5
    assert only_problem(config) == "trainer.num_epochs: expected an integer, got 2.5"


def test_int_is_accepted_as_float() -> None:
    config = valid_config()
    config["model"]["dropout"] = 0
    config["trainer"]["grad_norm"] = 5
    config["trainer"]["optimizer"]["lr"] = 1
    experiment = validate_experiment(config)
    assert experiment.model.params["dropout"] == 0
    assert experiment["trainer"]["grad_norm"] == 5


def test_bool_is_not_a_float() -> None:
    config = valid_config()
    config["model"]["dropout"] = False
    assert only_problem(config) == "model.dropout: expected a number, got False"


def test_string_is_not_a_bool() -> None:
    config = valid_config()
    config["dataset_reader"]["token_indexers"]["tokens"]["lowercase_tokens"] = "true"
    problem = only_problem(config)
    assert problem == (
        "dataset_reader.token_indexers.tokens.lowercase_tokens: expected a boolean, got 'true'"
    )


def test_null_for_a_required_value_is_a_type_error() -> None:
    config = valid_config()
    config["model"]["token_embedders"]["tokens"]["embedding_dim"] = None
    problem = only_problem(config)
    assert problem == "model.token_embedders.tokens.embedding_dim: expected an integer, got None"


def test_null_is_accepted_where_the_default_is_null() -> None:
    config = valid_config()
    config["test_data_path"] = None
    config["trainer"]["patience"] = None
    validate_experiment(config)


def test_choices_with_suggestion() -> None:
    config = valid_config()
    config["model"]["token_embedders"]["token_characters"]["activation"] = "tanhh"
    problem = only_problem(config)
    assert problem.startswith(
        "model.token_embedders.token_characters.activation: 'tanhh' is not one of "
    )
    assert problem.endswith("; did you mean tanh?")


def test_choices_without_suggestion_lists_options() -> None:
    config = valid_config()
    config["dataset_reader"]["coding_scheme"] = "XYZ"
    problem = only_problem(config)
    assert problem == "dataset_reader.coding_scheme: 'XYZ' is not one of 'IOB1', 'BIO', 'BIOUL'"


@pytest.mark.parametrize(
    ("remove", "expected"),
    [
        (("model",), "model: missing required parameter"),
        (("train_data_path",), "train_data_path: missing required parameter"),
        (("trainer", "optimizer"), "trainer.optimizer: missing required parameter"),
        (
            ("model", "token_embedders", "tokens", "embedding_dim"),
            "model.token_embedders.tokens.embedding_dim: missing required parameter",
        ),
    ],
)
def test_missing_required(remove: tuple[str, ...], expected: str) -> None:
    config = valid_config()
    node = config
    for key in remove[:-1]:
        node = node[key]
    del node[remove[-1]]
    problems = problems_of(config)
    assert expected in problems
    if remove != ("model",):
        assert problems == [expected]


def test_several_problems_reported_at_once() -> None:
    config = valid_config()
    encoder = config["model"]["encoder"]
    encoder["hiden_sizes"] = encoder.pop("hidden_sizes")
    config["trainer"]["num_epochs"] = "3"
    config["trainer"]["optimizer"]["type"] = "adamw"
    config["dataset_reader"]["coding_scheme"] = "BIOES"
    config["data_loader"]["shuffle"] = 1
    del config["train_data_path"]
    config["trainer"]["validation_metric"] = "f1"
    with pytest.raises(ConfigError) as info:
        validate_experiment(config, source="cfg.jsonnet")
    problems = info.value.problems
    expected_paths = [
        "model.encoder.hiden_sizes:",
        "model.encoder.hidden_sizes:",
        "trainer.num_epochs:",
        "trainer.optimizer.type:",
        "dataset_reader.coding_scheme:",
        "data_loader.shuffle:",
        "train_data_path:",
        "trainer.validation_metric:",
    ]
    assert len(problems) == len(expected_paths), problems
    for prefix in expected_paths:
        assert sum(p.startswith(prefix) for p in problems) == 1, (prefix, problems)
    lines = str(info.value).splitlines()
    assert lines[0] == f"cfg.jsonnet: {len(expected_paths)} problems"
    assert len(lines) == 1 + len(expected_paths)
    assert all(line.startswith("  ") for line in lines[1:])


def test_single_problem_message_is_one_line() -> None:
    config = valid_config()
    config["trainer"]["num_epochs"] = "3"
    with pytest.raises(ConfigError) as info:
        validate_experiment(config, source="cfg.jsonnet")
    assert str(info.value) == "cfg.jsonnet: trainer.num_epochs: expected an integer, got '3'"


def test_defaults_filled_for_nested_plain_objects() -> None:
    config = valid_config()
    del config["data_loader"]
    experiment = validate_experiment(config)
    assert experiment["vocabulary"] == {"min_count": {}, "max_vocab_size": {},
                                        "labels_from_evaluation_data": False}
    loader = experiment["data_loader"]
    assert loader["batch_size"] == 32
    assert loader["shuffle"] is True
    assert loader["max_tokens"] is None
    trainer = experiment["trainer"]
    assert trainer["num_epochs"] == 2
    assert trainer["patience"] is None
    assert trainer["callbacks"] == []
    assert trainer["learning_rate_scheduler"] is None
    assert experiment["random_seed"] == 13370
    assert experiment["evaluate_on_test"] is False
    assert experiment["test_data_path"] is None


def test_defaults_filled_around_given_values() -> None:
    config = valid_config()
    config["vocabulary"] = {"min_count": {"tokens": 2}}
    experiment = validate_experiment(config)
    assert experiment["vocabulary"] == {"min_count": {"tokens": 2}, "max_vocab_size": {},
                                        "labels_from_evaluation_data": False}
    assert experiment["data_loader"]["batch_size"] == 8
    assert experiment["data_loader"]["sort_by_length"] is True


def test_defaults_filled_in_components() -> None:
    experiment = validate_experiment(valid_config())
    optimizer = experiment["trainer"]["optimizer"]
    assert optimizer.params["lr"] == 0.001
    assert optimizer.params["weight_decay"] == 0.0
    embedder = experiment.model.params["token_embedders"]["tokens"]
    assert embedder.params["trainable"] is True
    assert embedder.params["vocab_namespace"] == "tokens"


def test_plain_object_given_a_list() -> None:
    config = valid_config()
    config["data_loader"] = [8]
    assert only_problem(config) == "data_loader: expected an object, got [8]"


def test_mapping_given_a_list() -> None:
    config = valid_config()
    config["model"]["token_embedders"] = [{"type": "embedding", "embedding_dim": 5}]
    assert only_problem(config) == "model.token_embedders: expected an object of token_embedders"


def test_sequence_of_components_has_indexed_paths() -> None:
    config = valid_config()
    config["trainer"]["callbacks"] = [{"type": "wandb"}, {"type": "wandb", "mode": "onlin"}]
    problem = only_problem(config)
    assert problem.startswith("trainer.callbacks.1.mode: 'onlin' is not one of ")
    assert problem.endswith("; did you mean online?")


def test_sequence_given_an_object() -> None:
    config = valid_config()
    config["trainer"]["callbacks"] = {"type": "wandb"}
    assert only_problem(config) == "trainer.callbacks: expected a list of callbacks"


def test_check_paths_missing_file(tmp_path: Path) -> None:
    config = valid_config()
    train = tmp_path / "train.txt"
    train.write_text("-DOCSTART- -X- O O\n", encoding="utf-8")
    config["train_data_path"] = str(train)
    config["validation_data_path"] = str(tmp_path / "missing_dev.txt")
    validate_experiment(config, check_paths=False)
    problem = only_problem(config, check_paths=True)
    assert problem.startswith(f"validation_data_path: {tmp_path / 'missing_dev.txt'}: ")
    assert "no such data file" in problem


def test_check_paths_accepts_gzipped_file(tmp_path: Path) -> None:
    config = valid_config()
    for key, name in [("train_data_path", "train.txt"), ("validation_data_path", "dev.txt")]:
        with gzip.open(tmp_path / f"{name}.gz", "wt", encoding="utf-8") as handle:
            handle.write("-DOCSTART- -X- O O\n")
        config[key] = str(tmp_path / name)
    validate_experiment(config, check_paths=True)


def test_check_paths_reports_every_missing_file(tmp_path: Path) -> None:
    config = valid_config()
    config["train_data_path"] = str(tmp_path / "a.txt")
    config["validation_data_path"] = str(tmp_path / "b.txt")
    config["test_data_path"] = str(tmp_path / "c.txt")
    problems = problems_of(config, check_paths=True)
    assert [p.split(":")[0] for p in problems] == [
        "train_data_path", "validation_data_path", "test_data_path",
    ]


@pytest.mark.parametrize("metric", ["f1", "+", "loss", "*f1"])
def test_validation_metric_needs_a_sign(metric: str) -> None:
    config = valid_config()
    config["trainer"]["validation_metric"] = metric
    problem = only_problem(config)
    assert problem.startswith(f"trainer.validation_metric: {metric!r} must start with +")


@pytest.mark.parametrize("metric", ["+f1", "-loss", "+accuracy"])
def test_validation_metric_with_sign(metric: str) -> None:
    config = valid_config()
    config["trainer"]["validation_metric"] = metric
    validate_experiment(config)


def test_validation_metric_defaults_to_minus_loss() -> None:
    config = valid_config()
    del config["trainer"]["validation_metric"]
    assert validate_experiment(config)["trainer"]["validation_metric"] == "-loss"


def test_evaluate_on_test_without_test_path() -> None:
    config = valid_config()
    config["evaluate_on_test"] = True
    assert only_problem(config) == "evaluate_on_test: true but test_data_path is not set"
    config["test_data_path"] = "test.txt"
    validate_experiment(config)


def test_embedder_without_matching_indexer() -> None:
    config = valid_config()
    embedders = config["model"]["token_embedders"]
    embedders["chars"] = embedders.pop("token_characters")
    problem = only_problem(config)
    assert problem.startswith(
        "model.token_embedders.chars: no dataset_reader.token_indexers.chars feeds it"
    )
    assert "token_characters" in problem and "tokens" in problem


def test_indexer_without_embedder_is_allowed() -> None:
    config = valid_config()
    del config["model"]["token_embedders"]["token_characters"]
    validate_experiment(config)


def test_suggest() -> None:
    assert suggest("hiden_sizes", ["hidden_sizes", "bidirectional"]) == (
        "; did you mean hidden_sizes?"
    )
    assert suggest("qqq", ["hidden_sizes"]) == ""
    assert suggest("x", []) == ""


def test_lookup_unknown_category() -> None:
    problem = lookup("no_such_category", "thing")
    assert problem == "unknown no_such_category type 'thing' (known: none)"


@pytest.fixture
def scratch_category(monkeypatch: pytest.MonkeyPatch) -> str:
    """A registry category of the test's own, gone after it (the registry is global: what one
    test registers must not reach another run in the same worker)."""
    from elmo_experiments.config import registry

    monkeypatch.setitem(registry._REGISTRY, "test_validate_category", {})
    return "test_validate_category"


def test_register_twice_with_another_builder_fails(scratch_category: str) -> None:
    def first() -> None: ...

    def second() -> None: ...

    register(scratch_category, "thing", params=[])(first)
    register(scratch_category, "thing", params=[])(first)
    with pytest.raises(ValueError, match="registered twice"):
        register(scratch_category, "thing", params=[])(second)


def test_spec_build_passes_params_and_context(scratch_category: str) -> None:
    def build(vocab: str, size: int = 3) -> tuple[int, str]:
        return size, vocab

    register(scratch_category, "built", context=("vocab",))(build)
    validator = Validator()
    spec = validator.component({"type": "built"}, scratch_category, "x")
    assert validator.problems == []
    assert isinstance(spec, Spec)
    assert spec.build(vocab="v") == (3, "v")
    with pytest.raises(TypeError, match="x: builder needs context"):
        spec.build()


def test_values_refused_at_build_time_are_config_errors_with_the_path() -> None:
    """A value the schema admits but torch refuses still names its place."""
    from elmo_experiments.errors import ConfigError

    validator = Validator()
    spec = validator.component({"type": "adam", "lr": 1e-3}, "optimizer", "trainer.optimizer")
    assert not validator.problems and spec is not None
    spec.params["lr"] = -1.0  # as if the schema had let it through
    with pytest.raises(ConfigError, match=r"^config: trainer\.optimizer: .*learning rate"):
        spec.build(parameters=[torch.nn.Parameter(torch.zeros(1))])


@pytest.mark.parametrize(("config", "problem"), [
    ({"type": "adam", "lr": -1.0}, r"trainer\.optimizer\.lr: must be greater than 0"),
    ({"type": "adam", "betas": [0.9]}, r"trainer\.optimizer\.betas: expected two numbers"),
    ({"type": "adam", "betas": [0.9, 1.5]}, r"betas: each value must lie in \[0, 1\)"),
    ({"type": "sgd", "lr": 0.0}, r"trainer\.optimizer\.lr: must be greater than 0"),
])
def test_optimizer_values_are_checked_at_validation_time(config: dict, problem: str) -> None:
    validator = Validator()
    validator.component(config, "optimizer", "trainer.optimizer")
    assert len(validator.problems) == 1 and re.search(problem, validator.problems[0])


def test_only_component_value_errors_become_config_errors() -> None:
    """A builder's ConfigValueError is a one-line config error with the dotted path; any other
    ValueError (a bug deep inside a library) keeps its traceback."""
    from elmo_experiments.config.registry import Spec, register
    from elmo_experiments.errors import ConfigValueError

    def refuse(kind: str) -> None:
        if kind == "config":
            raise ConfigValueError("size must be even")
        raise ValueError("something deep inside a library broke")

    register("test_category", "refuser", params=[Param("kind", str)])(refuse)
    from elmo_experiments.config.registry import _REGISTRY

    refuser = _REGISTRY["test_category"]["refuser"]
    with pytest.raises(ConfigError, match=r"model\.thing: size must be even"):
        Spec(refuser, {"kind": "config"}, "model.thing").build()
    with pytest.raises(ValueError, match="deep inside"):
        Spec(refuser, {"kind": "bug"}, "model.thing").build()
    del _REGISTRY["test_category"]


@pytest.mark.parametrize(("path", "value", "problem"), [
    (("model", "encoder", "hidden_sizes"), [0],
     "model.encoder.hidden_sizes: 0 is outside [1, inf]"),
    (("model", "encoder", "hidden_sizes"), [20, -1],
     "model.encoder.hidden_sizes: -1 is outside [1, inf]"),
    (("model", "encoder", "hidden_sizes"), [], "model.encoder.hidden_sizes: expected at least one "
     "size, got []"),
    (("model", "encoder", "hidden_sizes"), [20.5], "model.encoder.hidden_sizes: expected a list "
     "of integers, got [20.5]"),
    (("model", "token_embedders", "tokens", "embedding_dim"), 0,
     "model.token_embedders.tokens.embedding_dim: 0 is outside [1, inf]"),
    (("model", "token_embedders", "token_characters", "num_filters"), 0,
     "model.token_embedders.token_characters.num_filters: 0 is outside [1, inf]"),
    (("model", "token_embedders", "token_characters", "ngram_filter_sizes"), [3, 0],
     "model.token_embedders.token_characters.ngram_filter_sizes: 0 is outside [1, inf]"),
    (("dataset_reader", "token_indexers", "token_characters", "min_padding_length"), -1,
     "dataset_reader.token_indexers.token_characters.min_padding_length: -1 is outside "
     "[0.0, inf]"),
])
def test_sizes_are_validated_with_their_dotted_path(path: tuple[str, ...], value: Any,
                                                     problem: str) -> None:
    config = valid_config()
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert only_problem(config) == problem


SIZE_NAME = re.compile(r"(_dims?|_sizes?|^num_filters|_length|^n_layers|^cell_dim)$")


def test_every_registered_size_has_bounds() -> None:
    """Every width, size, length or count of layers a component declares is bounded (a 0 is a
    config error with its dotted path, not PyTorch's ValueError at build time)."""
    from elmo_experiments.config.registry import categories, entries

    unbounded = [f"{category}:{name}.{param.name}"
                 for category in categories() for name, entry in entries(category).items()
                 for param in entry.params
                 if SIZE_NAME.search(param.name) and param.component is None
                 and param.fields is None and param.bounds is None and param.check is None]
    assert unbounded == []


def test_bilm_architecture_sizes_are_validated() -> None:

    validator = Validator()
    validator.component({"type": "bilm_lm", "cell_dim": 0, "projection_dim": 16,
                         "filters": [[1, 8], [2, 0]], "n_highway": -1, "cell_clip": 0.0},
                        "model", "model")
    assert validator.problems == [
        "model.cell_dim: 0 is outside [1, inf]",
        "model.cell_clip: must be greater than 0",
        "model.filters: expected a list of [width, count] pairs of positive integers, got "
        "[[1, 8], [2, 0]]",
        "model.n_highway: -1 is outside [0.0, inf]"]


def test_a_negative_mix_l2_is_refused_with_its_path(tiny_bilm_dir) -> None:
    from elmo_experiments.config.validate import Validator

    validator = Validator()
    validator.component({"type": "elmo", "weights": str(tiny_bilm_dir), "mixes": [{"l2": -0.1}]},
                        "token_embedder", "model.token_embedders.elmo")
    assert [p for p in validator.problems if "l2" in p] == [
        "model.token_embedders.elmo.mixes.0.l2: -0.1 is outside [0.0, inf]"], validator.problems
