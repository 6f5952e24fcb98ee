"""Print every import cycle between modules of collab and agents; exit 1 if there is one.

    python -m tests.architecture.import_cycles

Counts every import a module makes: at module level and inside functions (a function-level
import hides a cycle from Python's import machinery, not from a reader), and ``TYPE_CHECKING``
imports too (a type-only import still ties the two modules together; see
tests/architecture/imports.py). tests/architecture/test_import_architecture.py runs the same
check.
"""

from __future__ import annotations

import sys

from tests.architecture.imports import PACKAGES, cycle_graph, import_cycles, shortest_cycle


def main() -> int:
    import_graph = cycle_graph()
    cycles = import_cycles(import_graph)
    print(f"{len(import_graph.modules)} modules of {', '.join(PACKAGES)}: {len(cycles)} cycle(s)")
    for group in cycles:
        print(f"- {len(group)} modules: {', '.join(group)}")
        print(f"  e.g. {' -> '.join(shortest_cycle(group, import_graph))}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
