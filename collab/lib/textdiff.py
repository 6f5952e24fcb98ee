"""Line diffs of two texts for people to read (document history), with the size of a change.

Framework-free: the history page renders ``DiffLine`` rows; edits to the live document use the
minimal character diffs in ``collab.lib.ytext`` instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

DiffKind = Literal["same", "ins", "del", "skip"]


@dataclass(frozen=True)
class DiffLine:
    kind: DiffKind
    text: str  # for "skip": a note such as "12 unchanged lines"


@dataclass(frozen=True)
class ChangeSize:
    inserted: int  # characters
    deleted: int

    @property
    def is_empty(self) -> bool:
        return not (self.inserted or self.deleted)


def _opcodes(
    old_lines: list[str], new_lines: list[str]
) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()


def change_size(old: str, new: str) -> ChangeSize:
    """Characters inserted and deleted, counted on the changed lines."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    inserted = deleted = 0
    for tag, i1, i2, j1, j2 in _opcodes(old_lines, new_lines):
        if tag == "equal":
            continue
        before, after = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        for ctag, a1, a2, b1, b2 in difflib.SequenceMatcher(
            None, before, after, autojunk=False
        ).get_opcodes():
            if ctag != "equal":
                deleted += a2 - a1
                inserted += b2 - b1
    return ChangeSize(inserted=inserted, deleted=deleted)


def diff_lines(old: str, new: str, *, context: int = 3) -> list[DiffLine]:
    """The lines of ``new`` against ``old``; long unchanged stretches fold into one "skip"."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    rows: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in _opcodes(old_lines, new_lines):
        if tag == "equal":
            same = old_lines[i1:i2]
            first, last = i1 == 0, i2 == len(old_lines)
            keep_head = 0 if first else context
            keep_tail = 0 if last else context
            if len(same) > keep_head + keep_tail + 1:
                rows += [DiffLine("same", line) for line in same[:keep_head]]
                hidden = len(same) - keep_head - keep_tail
                rows.append(
                    DiffLine("skip", f"{hidden} unchanged line{'s' if hidden != 1 else ''}")
                )
                rows += [DiffLine("same", line) for line in same[len(same) - keep_tail :]]
            else:
                rows += [DiffLine("same", line) for line in same]
            continue
        rows += [DiffLine("del", line) for line in old_lines[i1:i2]]
        rows += [DiffLine("ins", line) for line in new_lines[j1:j2]]
    return rows
