"""Print every module of the agent core over ``MAX_LINES`` lines; exit 1 if there is one.

    python -m tests.architecture.module_sizes

The agent core is ``agents/`` but for the evaluation harness (``agents/evaluation/``: simulated
users and hand-written scenario data) and migrations. A module that grows past the limit is
split by role (what it builds, what it checks, what it writes out), not cut in halves.
tests/architecture/test_module_sizes.py runs the same check.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500
CORE = "agents"
OUTSIDE_THE_CORE = ("agents/evaluation/",)


def core_modules(root: Path = ROOT) -> list[Path]:
    modules = []
    for path in sorted((root / CORE).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if "/migrations/" in relative or relative.startswith(OUTSIDE_THE_CORE):
            continue
        modules.append(path)
    return modules


def long_modules(root: Path = ROOT, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(path, lines)`` of each core module longer than ``limit`` lines, longest first."""
    found = []
    for path in core_modules(root):
        lines = len(path.read_text().splitlines())
        if lines > limit:
            found.append((path.relative_to(root).as_posix(), lines))
    return sorted(found, key=lambda row: (-row[1], row[0]))


def main() -> int:
    found = long_modules()
    print(f"{len(core_modules())} modules of the agent core: {len(found)} over {MAX_LINES} lines")
    for path, lines in found:
        print(f"- {path}: {lines} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
