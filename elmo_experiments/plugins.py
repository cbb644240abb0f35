"""Components from outside the package: ``--include-package MODULE`` (AllenNLP's convention) and
the ``elmo_experiments.plugins`` entry-point group of installed packages.

Either way the user's module registers its readers, models, metrics, embedders or scorers
(``elmo-exp score NAME``) with ``elmo_experiments.config.registry.register`` when it is imported;
nothing else is needed. An installed package may also add its own ``elmo-exp`` commands: click
commands named in the ``elmo_experiments.commands`` entry-point group (a built-in command's name
is not taken over).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil
import sys
from typing import Any

from elmo_experiments.errors import PluginError

ENTRY_POINT_GROUP = "elmo_experiments.plugins"
_loaded_entry_points = False


def include_package(name: str) -> None:
    """Import ``name`` and, for a package, every module below it; the working directory is
    searched first, so a module beside the config needs no installing."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(name)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), f"{name}."):
            importlib.import_module(info.name)
    except ImportError as error:  # the user's module or one it imports
        raise PluginError(f"--include-package {name}: cannot import it ({error})") from None


def load_entry_points() -> None:
    """Import every installed plugin (once per process)."""
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            point.load()
        except Exception as error:  # a broken plugin names itself instead of a traceback
            raise PluginError(f"plugin {point.name} ({point.value}, entry point group "
                              f"{ENTRY_POINT_GROUP}): cannot load it ({error})") from None


COMMAND_GROUP = "elmo_experiments.commands"  # installed packages' own elmo-exp commands


def plugin_commands() -> dict[str, importlib.metadata.EntryPoint]:
    """Command name -> its entry point (``elmo_experiments.commands``: a click command)."""
    return {point.name: point for point in importlib.metadata.entry_points(group=COMMAND_GROUP)}


def load_command(point: importlib.metadata.EntryPoint) -> Any:
    """The click command an entry point names; a broken one is a ``PluginError``."""
    import click

    try:
        command = point.load()
    except Exception as error:
        raise PluginError(f"plugin command {point.name} ({point.value}, entry point group "
                          f"{COMMAND_GROUP}): cannot load it ({error})") from None
    if not isinstance(command, click.Command):
        raise PluginError(f"plugin command {point.name} ({point.value}): not a click command")
    return command
