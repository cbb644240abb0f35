"""The README's architecture map names every folder and module of the package, and nothing
that is not there (a file added, moved or deleted shows here first)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "elmo_experiments"


def the_map() -> tuple[str, str]:
    """The map's package part and the rest (the project's folders), from README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Architecture\n", 1)[1]
    block = section.split("```\n", 2)[1]
    package, _, project = block.partition("\nexperiments/")
    return package, "experiments/" + project


def named(text: str) -> set[str]:
    """The files (``x.py``) and folders (``x/``) a text names."""
    return set(re.findall(r"(?<![\w./])([A-Za-z_]\w*(?:\.py|/))", text))


def test_the_map_names_every_folder_and_module_of_the_package() -> None:
    package, _ = the_map()
    top = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} | {
        p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    assert top - named(package) == set()


def test_what_the_map_names_is_there() -> None:
    package, project = the_map()
    everything = {f"{p.name}/" for p in PACKAGE.rglob("*") if p.is_dir()} | {
        p.name for p in PACKAGE.rglob("*.py")}
    assert named(package) - everything - {"elmo_experiments/"} == set()
    assert {name for name in named(project) if name.endswith("/")} - {
        f"{p.name}/" for p in ROOT.rglob("*") if p.is_dir() and ".venv" not in p.parts} == set()
