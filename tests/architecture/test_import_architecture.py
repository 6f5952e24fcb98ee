"""The import contracts (.importlinter) hold, and no import cycle is left."""

from __future__ import annotations

import ast
import configparser
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.architecture.contracts import project_imports
from tests.architecture.imports import (
    PACKAGES,
    _FunctionImports,
    cycle_graph,
    function_level_imports,
    import_cycles,
)

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


def test_a_loop_closed_only_by_a_type_checking_import_is_a_cycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a relay that names the rooms' type only for type checking, and rooms that import it
    package = tmp_path / "looppkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rooms.py").write_text("from looppkg import relay\n")
    (package / "relay.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from looppkg.rooms import R\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    assert import_cycles(cycle_graph(("looppkg",))) == [["looppkg.relay", "looppkg.rooms"]]


def _max_project_imports() -> int:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    return config.getint("importlinter:contract:function-level-imports", "max_project_imports")


def test_at_most_15_function_level_imports_of_project_modules() -> None:
    assert _max_project_imports() <= 15
    ours = project_imports(function_level_imports(), list(PACKAGES))
    assert len(ours) <= _max_project_imports(), "\n".join(item.expression for item in ours)


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
