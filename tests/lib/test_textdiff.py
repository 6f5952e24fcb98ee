from __future__ import annotations

from collab.lib.textdiff import ChangeSize, DiffLine, change_size, diff_lines


def test_change_size_counts_characters_inserted_and_deleted():
    assert change_size("Hello world\n", "Hello brave world\n") == ChangeSize(inserted=6, deleted=0)
    assert change_size("one\ntwo\n", "one\n") == ChangeSize(inserted=0, deleted=4)
    assert change_size("same", "same").is_empty


def test_change_size_counts_emoji_and_cjk_as_characters():
    assert change_size("", "你好 👋") == ChangeSize(inserted=4, deleted=0)


def test_diff_marks_removed_and_added_lines():
    rows = diff_lines("a\nb\nc", "a\nB\nc")

    assert rows == [
        DiffLine("same", "a"),
        DiffLine("del", "b"),
        DiffLine("ins", "B"),
        DiffLine("same", "c"),
    ]


def test_diff_folds_long_unchanged_stretches():
    old = "\n".join(f"line {n}" for n in range(20))
    new = old.replace("line 10", "line ten")

    rows = diff_lines(old, new, context=2)

    assert [row.kind for row in rows] == [
        "skip",
        "same",
        "same",
        "del",
        "ins",
        "same",
        "same",
        "skip",
    ]
    assert rows[0].text == "8 unchanged lines"
    assert rows[-1].text == "7 unchanged lines"


def test_diff_of_identical_texts_has_no_changes():
    assert all(row.kind in {"same", "skip"} for row in diff_lines("x\ny", "x\ny"))
