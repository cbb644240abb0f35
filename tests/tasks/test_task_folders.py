"""A task is one folder of ``elmo_experiments/tasks/``: found there (registry, ``elmo-exp
score``, the tables), never listed."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import elmo_experiments.tasks
from elmo_experiments.cli import cli
from elmo_experiments.config import registry
from elmo_experiments.tasks import task_names

SIX = ["coref", "ner", "snli", "squad", "srl", "sst5"]
PACKAGE_TASKS = Path(elmo_experiments.tasks.__file__).parent

def test_the_tasks_are_the_folders() -> None:
    folders = PACKAGE_TASKS.iterdir()
    assert task_names() == sorted(p.name for p in folders if (p / "__init__.py").is_file())
    assert set(SIX) <= set(task_names())  # the paper's six; others may follow (GAP)
    assert {"coref", "ner", "squad", "srl"} <= set(registry.entries("scorer"))


def test_the_tables_list_the_papers_tasks_in_its_order() -> None:
    from elmo_experiments.analysis.tables import task_order

    assert task_order()[:6] == ["squad", "snli", "srl", "coref", "ner", "sst5"]
    assert task_order()[6:] == sorted(set(task_names()) - set(SIX))  # the others by name


def _module(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text))


SCORER = """
    import click

    from elmo_experiments.config.registry import register


    @click.command("{name}")
    @click.argument("path")
    def score(path: str) -> None:
        click.echo(f"{name} scored {{path}}")


    @register("scorer", "{name}", params=[])
    def scorer() -> click.Command:
        return score
"""


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a test registers is gone after it."""
    monkeypatch.setattr(registry, "_REGISTRY",
                        {category: dict(found) for category, found in registry._REGISTRY.items()})


def test_a_new_task_folder_is_found_everywhere_without_a_core_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_registry: None) -> None:
    """A seventh folder (here beside the package's, on the tasks package's path) is a task for
    the registry, ``elmo-exp score`` and the tables."""
    _module(tmp_path / "zztask", "__init__.py", '"""A test task."""\n')
    _module(tmp_path / "zztask", "components.py", SCORER.format(name="zztask"))
    monkeypatch.setattr(elmo_experiments.tasks, "__path__",
                        [*elmo_experiments.tasks.__path__, str(tmp_path)])
    try:
        assert set(task_names()) == {*SIX, "zztask"} | {
            p.name for p in PACKAGE_TASKS.iterdir() if (p / "__init__.py").is_file()}
        elmo_experiments.tasks.load_tasks()
        result = CliRunner().invoke(cli, ["score", "zztask", "file.txt"])
        assert result.exit_code == 0, result.output
        assert result.output == "zztask scored file.txt\n"
        from elmo_experiments.analysis.tables import task_order

        assert task_order()[-1] == "zztask"  # after the paper's six
    finally:
        for name in [m for m in sys.modules if m.startswith("elmo_experiments.tasks.zztask")]:
            del sys.modules[name]


def test_a_task_folder_without_components_is_named(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments.errors import PluginError

    _module(tmp_path / "zzbare", "__init__.py", "")
    monkeypatch.setattr(elmo_experiments.tasks, "__path__",
                        [*elmo_experiments.tasks.__path__, str(tmp_path)])
    try:
        with pytest.raises(PluginError, match=r"tasks/zzbare/ has no components\.py"):
            elmo_experiments.tasks.load_tasks()
    finally:
        sys.modules.pop("elmo_experiments.tasks.zzbare", None)


def test_a_plugin_adds_a_scorer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                clean_registry: None) -> None:
    _module(tmp_path, "zzscorer_plugin.py", SCORER.format(name="plugged"))
    monkeypatch.chdir(tmp_path)  # --include-package searches the working directory first
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        result = CliRunner().invoke(cli, ["score", "--include-package", "zzscorer_plugin",
                                          "plugged", "x"])
        assert result.exit_code == 0, result.output
        assert result.output == "plugged scored x\n"
    finally:
        sys.modules.pop("zzscorer_plugin", None)


def test_a_plugin_adds_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from elmo_experiments import plugins

    _module(tmp_path, "zzcommand_plugin.py", """
        import click


        @click.command()
        @click.argument("who")
        def hello(who: str) -> None:
            click.echo(f"hello {who}")
    """)
    monkeypatch.syspath_prepend(str(tmp_path))
    point = importlib.metadata.EntryPoint(name="hello", value="zzcommand_plugin:hello",
                                          group=plugins.COMMAND_GROUP)
    monkeypatch.setattr(plugins, "plugin_commands", lambda: {"hello": point})
    try:
        assert "hello" in CliRunner().invoke(cli, ["--help"]).output
        result = CliRunner().invoke(cli, ["hello", "world"])
        assert result.exit_code == 0, result.output
        assert result.output == "hello world\n"
    finally:
        sys.modules.pop("zzcommand_plugin", None)
