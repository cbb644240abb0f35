"""The package's layering rules (README, "Layout"), checked over the source's import
statements (no import is run): deferred imports inside functions count as dependencies."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "elmo_experiments"

# (importer, imported) pairs the rules still allow, to be removed (issue 40 item 4: the biLM
# files a run reads come through one registry hook); the list may only shrink
PENDING: set[tuple[str, str]] = set()
# a folder of the package -> the folders it must not import from
FORBIDDEN = {"elmo_experiments.training": ("elmo_experiments.bilm", "elmo_experiments.analysis")}


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


def test_training_imports_nothing_from_bilm_or_analysis() -> None:
    broken: list[tuple[str, str]] = []
    allowed: set[tuple[str, str]] = set()
    for module in MODULES:
        for folder, banned in FORBIDDEN.items():
            if not module.startswith(folder + ".") and module != folder:
                continue
            for imported in imports(module, deferred=True):
                if not imported.startswith(banned):
                    continue
                if (module, imported) in PENDING:
                    allowed.add((module, imported))
                else:
                    broken.append((module, imported))
    assert broken == []
    assert allowed == PENDING  # an entry no longer needed goes from PENDING


def test_no_import_cycles_at_import_time() -> None:
    assert cycles({module: imports(module, deferred=False) for module in MODULES}) == []


def test_no_import_cycles_within_a_folder_even_deferred() -> None:
    """A deferred import may reach back across folders (``experiment`` fills the registry from
    ``components``), never within one folder (archive.py <-> run_identity.py was one)."""
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
