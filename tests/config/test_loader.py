"""Jsonnet evaluation: imports, ext vars, environment variables, native functions, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elmo_experiments.config.loader import (
    LIBRARY_DIR,
    PROJECT_ROOT,
    evaluate_jsonnet,
    load_config,
    parse_ext_vars,
)
from elmo_experiments.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_plain_object(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "{ a: 1, b: { c: [1, 2] } }")
    assert evaluate_jsonnet(config) == {"a": 1, "b": {"c": [1, 2]}}


def test_import_relative_to_the_importing_file(tmp_path: Path) -> None:
    write(tmp_path / "sub" / "deeper" / "leaf.libsonnet", "{ value: 42 }")
    write(tmp_path / "sub" / "mid.libsonnet", "(import 'deeper/leaf.libsonnet') { mid: true }")
    config = write(tmp_path / "c.jsonnet", "{ x: import 'sub/mid.libsonnet' }")
    assert load_config(config) == {"x": {"value": 42, "mid": True}}


def test_import_from_experiments_lib(tmp_path: Path) -> None:
    config = write(
        tmp_path / "c.jsonnet",
        "local ner = import 'ner.libsonnet';\n"
        "local train = import 'trainer.libsonnet';\n"
        "{ reader: ner.reader.type, optimizer: train.adam(0.5) }\n",
    )
    assert load_config(config) == {
        "reader": "conll2003",
        "optimizer": {"type": "adam", "lr": 0.5},
    }


def test_local_file_shadows_the_library(tmp_path: Path) -> None:
    assert (LIBRARY_DIR / "trainer.libsonnet").is_file()
    write(tmp_path / "trainer.libsonnet", "{ local_copy: true }")
    config = write(tmp_path / "c.jsonnet", "import 'trainer.libsonnet'")
    assert load_config(config) == {"local_copy": True}


def test_missing_import_is_one_line_naming_the_import(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "local x = import 'nowhere.libsonnet';\n{ x: x }\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert len(info.value.problems) == 1
    message = str(info.value)
    assert "\n" not in message
    assert "nowhere.libsonnet" in message
    assert str(config) in message


def test_ext_vars_argument(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "{ name: std.extVar('run_name') }")
    assert load_config(config, ext_vars={"run_name": "first"}) == {"name": "first"}


def test_parse_ext_vars_feeds_load_config(tmp_path: Path) -> None:
    config = write(
        tmp_path / "c.jsonnet", "{ a: std.extVar('a'), b: std.parseJson(std.extVar('b')) }"
    )
    ext_vars = parse_ext_vars(["a=x=y", "b=3"])
    assert load_config(config, ext_vars=ext_vars) == {"a": "x=y", "b": 3}


def test_environment_variables_are_ext_vars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELMO_TEST_LOADER_VAR", "from-env")
    config = write(tmp_path / "c.jsonnet", "{ v: std.extVar('ELMO_TEST_LOADER_VAR') }")
    assert load_config(config) == {"v": "from-env"}


def test_explicit_ext_vars_win_over_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELMO_TEST_LOADER_VAR", "from-env")
    config = write(tmp_path / "c.jsonnet", "{ v: std.extVar('ELMO_TEST_LOADER_VAR') }")
    assert load_config(config, ext_vars={"ELMO_TEST_LOADER_VAR": "explicit"}) == {"v": "explicit"}


def test_undefined_ext_var_is_one_line_with_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ELMO_TEST_UNSET_VAR", raising=False)
    config = write(tmp_path / "c.jsonnet", "{\n  v: std.extVar('ELMO_TEST_UNSET_VAR'),\n}\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    message = str(info.value)
    assert "\n" not in message
    assert "undefined external variable: ELMO_TEST_UNSET_VAR" in message
    assert f"{config}:2:" in message


def test_native_env_reads_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELMO_TEST_LOADER_VAR", "set")
    monkeypatch.delenv("ELMO_TEST_UNSET_VAR", raising=False)
    config = write(
        tmp_path / "c.jsonnet",
        "{ set: std.native('env')('ELMO_TEST_LOADER_VAR'),"
        "  unset: std.native('env')('ELMO_TEST_UNSET_VAR') }",
    )
    assert load_config(config) == {"set": "set", "unset": ""}


def test_native_env_sees_ext_vars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELMO_TEST_UNSET_VAR", raising=False)
    config = write(tmp_path / "c.jsonnet", "{ v: std.native('env')('ELMO_TEST_UNSET_VAR') }")
    assert load_config(config) == {"v": ""}
    assert load_config(config, ext_vars={"ELMO_TEST_UNSET_VAR": "x"}) == {"v": "x"}


def test_native_project_path(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "{ p: std.native('project_path')('reproduction/ner') }")
    path = Path(load_config(config)["p"])
    assert path == PROJECT_ROOT / "reproduction" / "ner"
    assert path.is_dir()


def test_syntax_error_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    config = write(tmp_path / "broken.jsonnet", "{\n  a: 1,\n  b: ,\n}\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert len(info.value.problems) == 1
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{config}: ")
    assert re.search(re.escape(str(config)) + r":3:\d+", message)


def test_runtime_error_in_an_import_names_that_file(tmp_path: Path) -> None:
    write(tmp_path / "lib.libsonnet", "{\n  ok: 1,\n  bad: 1 + {},\n}\n")
    config = write(tmp_path / "c.jsonnet", "local lib = import 'lib.libsonnet';\n{ v: lib.bad }\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    message = str(info.value)
    assert "\n" not in message
    assert "lib.libsonnet:3:" in message


def test_error_inside_std_points_at_the_user_file(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "{\n  n: std.parseInt('x'),\n}\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    message = str(info.value)
    assert "\n" not in message
    assert f"{config}:2:" in message
    assert "std.jsonnet:" not in message


def test_config_must_be_an_object(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "[1, 2]")
    with pytest.raises(ConfigError, match="must evaluate to an object"):
        load_config(config)


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.jsonnet"
    with pytest.raises(ConfigError) as info:
        load_config(missing)
    assert len(info.value.problems) == 1
    assert "no such config file" in str(info.value)
    assert str(missing) in str(info.value)


def test_directory_is_not_a_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path)


def test_load_config_applies_overrides(tmp_path: Path) -> None:
    config = write(tmp_path / "c.jsonnet", "{ trainer: { num_epochs: 10, patience: 3 } }")
    loaded = load_config(config, overrides=["trainer.num_epochs=1"])
    assert loaded == {"trainer": {"num_epochs": 1, "patience": 3}}


def test_parse_ext_vars() -> None:
    assert parse_ext_vars([]) == {}
    assert parse_ext_vars(["a=1", "b=", "a=2"]) == {"a": "2", "b": ""}


@pytest.mark.parametrize("pair", ["novalue", "=value", ""])
def test_parse_ext_vars_errors(pair: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_ext_vars(["ok=1", pair])
    assert len(info.value.problems) == 1
    assert "expected name=value" in str(info.value)
    assert repr(pair) in str(info.value)


def test_ext_vars_reach_std_native_env(monkeypatch, tmp_path) -> None:
    """``--ext-var ELMO_DATA_DIR=...`` changes the data a shipped config uses, as the
    environment variable does; the names the config read are reported."""
    from elmo_experiments.config.loader import PROJECT_ROOT, load_config

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    config = PROJECT_ROOT / "experiments" / "ner_baseline.jsonnet"
    assert "reproduction/ner/sample" in load_config(config)["train_data_path"]
    reads: dict[str, str] = {}
    loaded = load_config(config, ext_vars={"ELMO_DATA_DIR": str(tmp_path)}, reads=reads)
    assert loaded["train_data_path"] == f"{tmp_path}/ner_conll2003/eng.train"
    assert reads["ELMO_DATA_DIR"] == str(tmp_path)
    monkeypatch.setenv("ELMO_DATA_DIR", "/elsewhere")  # an explicit ext var wins
    assert load_config(config, ext_vars={"ELMO_DATA_DIR": str(tmp_path)})[
        "train_data_path"].startswith(str(tmp_path))


@pytest.mark.parametrize("config", ["sst5.jsonnet", "snli_baseline.jsonnet"])
def test_an_unknown_switch_value_is_an_error_not_the_default(config: str,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setenv("ELMO_SIZE", "cpuu")
    with pytest.raises(ConfigError, match=r"ELMO_SIZE=cpuu is not one of paper, cpu"):
        load_config(PROJECT_ROOT / "experiments" / config)
