"""A contract type for ``lint-imports``: imports inside functions only where the contract names
them (optional dependencies, ``AppConfig.ready``, heavy modules loaded by their first use).

Registered in ``.importlinter`` as ``function_level_imports``. Options:

- ``containers``: the packages to read.
- ``allowed``: ``importer -> imported`` lines (``imported`` as lint-imports names it: a module
  of ours, or an external package's root name). An allowed line no import matches any more is
  reported as a warning, so the list shrinks with the code.
- ``max_project_imports``: at most this many function-level import statements of our own
  modules (``collab``, ``agents``), allowed or not: each one is for a documented start-up
  order (``AppConfig.ready``) or a heavy module loaded by its first use, and the number only
  goes down.
"""

from __future__ import annotations

from typing import cast

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

from tests.architecture.imports import FunctionImport, function_level_imports


def project_imports(found: list[FunctionImport], containers: list[str]) -> list[FunctionImport]:
    """The function-level imports of modules of ``containers`` (ours), one per statement."""
    return [item for item in found if item.imported.split(".")[0] in containers]


def _parse(expression: str) -> str:
    importer, arrow, imported = (part.strip() for part in expression.partition("->"))
    if not arrow or not importer or not imported:
        raise fields.ValidationError(f"{expression!r} is not 'importer -> imported'")
    return f"{importer} -> {imported}"


class FunctionLevelImportsContract(Contract):
    type_name = "function_level_imports"

    containers = fields.ListField(subfield=fields.StringField())
    allowed = fields.ListField(subfield=fields.StringField(), required=False)
    max_project_imports = fields.IntegerField(required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        containers = cast("list[str]", self.containers)
        lines = cast("list[str] | None", self.allowed) or []
        allowed = {_parse(line) for line in lines}
        found = function_level_imports(containers)
        unlisted = [item for item in found if item.expression not in allowed]
        used = {item.expression for item in found}
        stale = sorted(allowed - used)
        limit = cast("int | None", self.max_project_imports)
        ours = project_imports(found, containers)
        over = limit is not None and len(ours) > limit
        return ContractCheck(
            kept=not unlisted and not over,
            warnings=[f"allowed but no longer found (remove it): {line}" for line in stale],
            metadata={
                "unlisted": [(i.importer, i.imported, i.line) for i in unlisted],
                "over": [(i.importer, i.imported, i.line) for i in ours] if over else [],
                "limit": limit,
            },
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        unlisted: list[tuple[str, str, int]] = check.metadata["unlisted"]
        output.print_error(
            f"{len(unlisted)} import(s) inside functions that the contract does not name: import "
            "at module level, or (optional dependency only) add the line to 'allowed' with why."
        )
        output.new_line()
        for importer, imported, line in unlisted:
            output.print_error(f"-   {importer} -> {imported} (l.{line})", bold=False)
        output.new_line()
        over: list[tuple[str, str, int]] = check.metadata["over"]
        if over:
            output.print_error(
                f"{len(over)} function-level imports of project modules, more than the "
                f"{check.metadata['limit']} the contract allows (max_project_imports):"
            )
            for importer, imported, line in over:
                output.print_error(f"-   {importer} -> {imported} (l.{line})", bold=False)
            output.new_line()
