"""The package's layering rules (README, "Architecture"), checked over the source's import
statements (no import is run): deferred imports inside functions count as dependencies."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "elmo_experiments"

# a folder of the package -> the folders it must not reach, through any chain of imports
FORBIDDEN = {"elmo_experiments.training": ("elmo_experiments.bilm", "elmo_experiments.tasks",
                                           "elmo_experiments.analysis")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def _owner(name: str) -> str | None:
    """The package module a dotted import name lies in (a module, or the package holding a
    name)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _import_statements(body: list[ast.stmt], deferred: bool) -> Iterator[ast.stmt]:
    """The import statements of ``body``; those in functions (and under ``TYPE_CHECKING``)
    only with ``deferred``."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if deferred:
                yield from _import_statements(node.body, deferred)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _import_statements(node.body if deferred else [], deferred)
            yield from _import_statements(node.orelse, deferred)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _import_statements(getattr(node, field, None) or [], deferred)


def imports(module: str, deferred: bool) -> set[str]:
    """The package modules ``module`` imports."""
    path = MODULES[module]
    found: set[str] = set()
    for node in _import_statements(ast.parse(path.read_text(encoding="utf-8")).body, deferred):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]) \
                if node.level else ""
            source = ".".join(part for part in (base, node.module or "") if part)
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                     for alias in node.names]
        found |= {owner for name in names if (owner := _owner(name)) and owner != module}
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def reached(module: str) -> set[str]:
    """Every package module ``module`` imports, directly or through others, deferred or not."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for other in imports(todo.pop(), deferred=True):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def test_training_reaches_nothing_of_the_bilm_the_tasks_or_analysis() -> None:
    """The trainer knows nothing of ELMo or of any task, at any depth of its imports."""
    broken = {(module, other) for module in MODULES for folder, banned in FORBIDDEN.items()
              if module == folder or module.startswith(folder + ".")
              for other in reached(module) if other.startswith(banned)}
    assert broken == set()


def test_no_import_cycles_counting_imports_inside_functions() -> None:
    """The registry is filled by the entry points (``components.load()``), so no module below
    them imports ``components`` and no circle runs through it."""
    assert cycles({module: imports(module, deferred=True) for module in MODULES}) == []


def test_nothing_below_the_entry_points_imports_components() -> None:
    entry_points = {"elmo_experiments.cli", "elmo_experiments.api", "elmo_experiments.testing",
                    "elmo_experiments.spacy_components"}
    importers = {module for module in MODULES
                 if "elmo_experiments.components" in imports(module, deferred=True)}
    assert importers <= entry_points


def test_no_import_cycles_within_a_folder_even_deferred() -> None:
    """Not even two modules of one folder (archive.py <-> run_identity.py was one)."""
    graph = {module: {other for other in imports(module, deferred=True)
                      if other.rpartition(".")[0] == module.rpartition(".")[0]}
             for module in MODULES}
    assert cycles(graph) == []


def test_the_core_imports_no_task_folder() -> None:
    """Task folders build on the core, never the reverse: nothing outside
    ``elmo_experiments/tasks/`` imports a task's modules (the registry and ``elmo-exp score``
    find them through ``tasks.load_tasks``), so a new task folder needs no core edit."""
    tasks = "elmo_experiments.tasks"
    broken = [(module, imported) for module in MODULES
              if not module.startswith(tasks)
              for imported in imports(module, deferred=True) if imported.startswith(tasks + ".")]
    assert broken == []


def test_training_names_no_biLM() -> None:
    """Not even in a string or a docstring: the trainer's vocabulary is the task's and the
    component's, never ELMo's (the package's own name aside)."""
    import re

    found = [f"{path.name}:{number}" for path in sorted((PACKAGE / "training").glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"elmo|bilm", re.sub(r"elmo[_-]experiments", "", line), re.I)]
    assert found == []
