"""What the import contracts and the cycle check read: the import graph of collab and agents.

- ``function_level_imports()``: every import statement inside a function body (the ones that
  hide a dependency from a reader and from module-level tools), as ``(importer, imported,
  line)``. ``FunctionLevelImportsContract`` (a contract type of ``lint-imports``, see
  ``.importlinter``) allows only the ones named in its ``allowed`` list.
- ``import_cycles()``: the groups of modules that import each other, directly or through
  others, counting every import: module level or inside a function, and ``TYPE_CHECKING`` ones
  too (``cycle_graph``). A loop that only a type-only import closes is still a loop: neither
  module can be read, type-checked or moved without the other, and the first runtime use of
  the type (an ``isinstance``, a default) turns it into an import error. The contracts read
  ``graph()``, without them (they never run), as ``.importlinter`` says.

Run ``python -m tests.architecture.import_cycles`` to print the cycles (exit 1 if any).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import grimp

PACKAGES = ("collab", "agents")


@dataclass(frozen=True, order=True)
class FunctionImport:
    importer: str
    imported: str
    line: int

    @property
    def expression(self) -> str:
        return f"{self.importer} -> {self.imported}"


@cache
def graph(packages: tuple[str, ...] = PACKAGES) -> grimp.ImportGraph:
    """Every import of ``packages`` (function-level ones included; ``TYPE_CHECKING`` ones not:
    they never run)."""
    return grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)


@cache
def cycle_graph(packages: tuple[str, ...] = PACKAGES) -> grimp.ImportGraph:
    """Every import of ``packages``, ``TYPE_CHECKING`` ones included: what the cycle check reads."""
    return grimp.build_graph(*packages, exclude_type_checking_imports=False, cache_dir=None)


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"{package} is not an importable package")
    return Path(next(iter(spec.submodule_search_locations)))


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    root = _package_dir(package)
    for path in sorted(root.rglob("*.py")):
        parts = (package, *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


class _FunctionImports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: frozenset[str]) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = known
        self.depth = 0
        self.found: list[FunctionImport] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _add(self, imported: str, line: int) -> None:
        if self.depth:
            self.found.append(FunctionImport(self.module, imported, line))

    def _resolve(self, name: str) -> str:
        """The module of ``name``: itself if it is one of ours, its root package otherwise
        (external packages are squashed, as lint-imports shows them)."""
        if name.split(".")[0] not in PACKAGES:
            return name.split(".")[0]
        while name and name not in self.known:
            name = name.rpartition(".")[0]
        return name

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(self._resolve(alias.name), node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            anchor = self.package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            self._add(self._resolve(candidate if candidate in self.known else base), node.lineno)


def function_level_imports(packages: Iterable[str] = PACKAGES) -> list[FunctionImport]:
    """Migrations aside: a data migration's functions import what they need by design (and
    must use ``apps.get_model``, not the models module)."""
    found: list[FunctionImport] = []
    known = frozenset(graph().modules)
    for package in packages:
        for module, path in _modules(package):
            if ".migrations." in f"{module}.":
                continue
            visitor = _FunctionImports(module, path.name == "__init__.py", known)
            visitor.visit(ast.parse(path.read_text(), filename=str(path)))
            found.extend(visitor.found)
    return sorted(set(found))


def import_cycles(import_graph: grimp.ImportGraph | None = None) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan, iterative), each sorted, the
    list sorted: every module of a group reaches every other through imports."""
    g = import_graph or cycle_graph()
    modules = sorted(g.modules)
    edges = {m: sorted(g.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = edges[node]
            if position < len(successors):
                work.append((node, position + 1))
                successor = successors[position]
                if successor not in index:
                    work.append((successor, 0))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(groups)


def shortest_cycle(group: list[str], import_graph: grimp.ImportGraph | None = None) -> list[str]:
    """One shortest loop through the first module of ``group`` (for the report)."""
    g = import_graph or cycle_graph()
    start = group[0]
    members = set(group)
    best: list[str] = []
    for successor in sorted(g.find_modules_directly_imported_by(start) & members):
        chain = g.find_shortest_chain(importer=successor, imported=start)
        if chain is not None and (not best or len(chain) + 1 < len(best)):
            best = [start, *chain]
    return best
