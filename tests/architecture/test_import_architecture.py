"""The import contracts (.importlinter) hold, and no import cycle is left."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

from tests.architecture.imports import _FunctionImports, import_cycles

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_import_cycle() -> None:
    assert import_cycles() == [], (
        "run `python -m tests.architecture.import_cycles` to see each loop"
    )


def test_no_cycle_between_the_platform_and_agents() -> None:
    mixed = [c for c in import_cycles() if {m.split(".")[0] for m in c} == {"collab", "agents"}]
    assert mixed == []


def test_the_cycle_finder_finds_loops_and_only_loops() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in [("a.x", "a.y"), ("a.y", "a.z"), ("a.z", "a.x"), ("a.z", "a.w")]:
        graph.add_import(importer=importer, imported=imported)
    graph.add_import(importer="a.v", imported="a.w")

    assert import_cycles(graph) == [["a.x", "a.y", "a.z"]]


def test_imports_inside_functions_are_found_and_type_checking_ones_are_not() -> None:
    source = """
from typing import TYPE_CHECKING
import json
if TYPE_CHECKING:
    from collab.tasks.models import Task
def late():
    from collab.tasks import models
    import langchain_openai.chat_models
    if TYPE_CHECKING:
        from collab.workspaces import models
class Thing:
    async def method(self):
        from . import services
"""
    known = frozenset({"collab.tasks", "collab.tasks.models", "collab.tasks.services"})
    visitor = _FunctionImports("collab.tasks.views", is_package=False, known=known)
    visitor.visit(ast.parse(source))

    assert [(item.imported, item.line) for item in visitor.found] == [
        ("collab.tasks.models", 7),
        ("langchain_openai", 8),
        ("collab.tasks.services", 13),
    ]
