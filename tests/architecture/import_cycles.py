"""Print every import cycle between modules of collab and agents; exit 1 if there is one.

    python -m tests.architecture.import_cycles

Counts every import a module can run: at module level and inside functions (a function-level
import hides a cycle from Python's import machinery, not from a reader); ``TYPE_CHECKING``
imports aside. tests/architecture/test_import_architecture.py runs the same check.
"""

from __future__ import annotations

import sys

from tests.architecture.imports import PACKAGES, graph, import_cycles, shortest_cycle


def main() -> int:
    import_graph = graph()
    cycles = import_cycles(import_graph)
    print(f"{len(import_graph.modules)} modules of {', '.join(PACKAGES)}: {len(cycles)} cycle(s)")
    for group in cycles:
        print(f"- {len(group)} modules: {', '.join(group)}")
        print(f"  e.g. {' -> '.join(shortest_cycle(group, import_graph))}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
