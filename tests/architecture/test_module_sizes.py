"""No module of the agent core is over 500 lines (tests/architecture/module_sizes.py)."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.module_sizes import MAX_LINES, long_modules


def test_no_module_of_the_agent_core_is_over_500_lines() -> None:
    assert MAX_LINES == 500
    assert long_modules() == [], "split by role: run `python -m tests.architecture.module_sizes`"


def _write(root: Path, relative: str, lines: int) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n" * lines)


def test_the_size_check_finds_long_core_modules_and_leaves_the_harness_and_migrations(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "agents/review/exports.py", 501)
    _write(tmp_path, "agents/llm/embedded_reply.py", 500)
    _write(tmp_path, "agents/evaluation/scenarios/generate.py", 900)
    _write(tmp_path, "agents/migrations/0001_initial.py", 900)

    assert long_modules(tmp_path) == [("agents/review/exports.py", 501)]
