"""How the suite runs (tests/suite.py): which tests run in which pass and mode, and one exit
status for the passes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from tests import suite

pytestmark = pytest.mark.mode_independent


def test_the_passes_fail_with_the_first_failure_and_a_pass_with_nothing_to_run_is_not_one() -> None:
    assert suite.combined([0, 0]) == 0
    assert suite.combined([0, 5]) == 0
    assert suite.combined([5, 0]) == 0
    assert suite.combined([1, 0]) == 1
    assert suite.combined([5, 2]) == 2
    assert suite.combined([5, 5]) == 5


def test_one_worker_is_one_plain_pytest_and_more_are_a_parallel_then_a_serial_pass() -> None:
    assert suite.passes(1) == [[]]
    parallel, serial = suite.passes(2)
    assert parallel[parallel.index("-n") + 1] == "2"
    assert parallel[-2:] == ["--suite-part", "parallel"]
    assert serial == ["--suite-part", "serial"]


def test_the_serial_pass_spreads_whole_modules_over_its_own_workers() -> None:
    _parallel, serial = suite.passes(2, 3)
    assert serial[serial.index("-n") + 1] == "3"
    assert serial[serial.index("--dist") + 1] == "loadfile"
    assert serial[-2:] == ["--suite-part", "serial"]
    assert suite.passes(1, 3) == [[]]


ROOT = Path(suite.__file__).resolve().parents[1]


@dataclass
class _Config:
    rootpath: Path = ROOT


@dataclass
class _Item:
    """What ``suite.select`` reads of a collected test."""

    nodeid: str
    markers: tuple[str, ...] = ()
    fixturenames: tuple[str, ...] = ()
    config: _Config = field(default_factory=_Config)

    @property
    def path(self) -> Path:
        return ROOT / self.nodeid.split("::")[0]

    def get_closest_marker(self, name: str) -> Any:
        return name if name in self.markers else None


def _select(items: list[_Item], **options: Any) -> list[str]:
    chosen = suite.select(cast("list[pytest.Item]", items), **options)
    return [cast("_Item", item).nodeid.split("::")[-1] for item in chosen]


ITEMS = [
    _Item("tests/tasks/test_new.py::test_new_test", fixturenames=("db",)),
    _Item("tests/agents/policies/test_policies.py::test_listed_pure"),
    _Item("tests/lib/test_new.py::test_marked_pure", markers=("mode_independent",)),
    _Item("tests/browser/test_journey.py::test_in_a_browser", fixturenames=("transactional_db",)),
    _Item("tests/tasks/test_new.py::test_marked_serial", markers=("serial",)),
]


def test_a_new_test_runs_in_both_modes_and_the_mode_independent_ones_in_the_first_only() -> None:
    everything = _select(ITEMS, part="all", skip_mode_independent=False)
    second_mode = _select(ITEMS, part="all", skip_mode_independent=True)

    assert len(everything) == 5
    assert second_mode == ["test_new_test", "test_in_a_browser", "test_marked_serial"]


def test_the_serial_pass_takes_the_listed_and_marked_tests_and_the_parallel_pass_the_rest() -> None:
    parallel = _select(ITEMS, part="parallel", skip_mode_independent=False)
    serial = _select(ITEMS, part="serial", skip_mode_independent=False)

    assert parallel == ["test_new_test", "test_listed_pure", "test_marked_pure"]
    assert serial == ["test_in_a_browser", "test_marked_serial"]


def test_a_mode_independent_test_that_asks_for_the_database_is_refused() -> None:
    wrong = _Item("tests/agents/policies/test_policies.py::test_reads_rows", fixturenames=("db",))

    with pytest.raises(pytest.UsageError, match="test_reads_rows: db"):
        _select([wrong], part="all", skip_mode_independent=False)
