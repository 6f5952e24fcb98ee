"""Framework-free helpers for the Yjs text of a task document (pycrdt).

Index units are the trap here. Python ``str`` indices count code points; Yjs in the browser
counts UTF-16 code units; pycrdt's ``Text`` (yrs with its default offset kind) counts UTF-8
bytes, and an offset that falls inside a multi-byte character silently inserts at the *end* of
the text. Every edit made from Python therefore goes through ``utf8_offset`` (and JSON anchors
for browsers through ``utf16_offset``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator

from pycrdt import Doc, Text

TEXT_NAME = "content"
# Documents that exist only as plain text are turned into Yjs with this client id, so that two
# processes seeding the same text at the same time produce the very same update (Yjs keeps one).
SEED_CLIENT_ID = 1
TextChange = Callable[[str], str]
# Below this many differing characters a character-level diff is cheap; above, diff lines first.
_CHAR_DIFF_LIMIT = 4_000


def utf8_offset(text: str, index: int) -> int:
    """The pycrdt (UTF-8 byte) offset of Python index ``index`` in ``text``."""
    return len(text[:index].encode("utf-8"))


def utf16_offset(text: str, index: int) -> int:
    """The Yjs/JavaScript (UTF-16 code unit) offset of Python index ``index`` in ``text``."""
    return len(text[:index].encode("utf-16-le")) // 2


def python_index_from_utf16(text: str, offset: int) -> int:
    """The Python index at UTF-16 offset ``offset`` (rounded down inside a surrogate pair)."""
    units = 0
    for index, char in enumerate(text):
        if units >= offset:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
        if units > offset:
            return index
    return len(text)


def new_doc(*, client_id: int | None = None) -> tuple[Doc, Text]:
    doc: Doc = Doc(client_id=client_id) if client_id is not None else Doc()
    return doc, doc.get(TEXT_NAME, type=Text)


def doc_from_updates(*updates: bytes, client_id: int | None = None) -> tuple[Doc, Text]:
    doc, text = new_doc(client_id=client_id)
    for update in updates:
        if update:
            doc.apply_update(update)
    return doc, text


def seed_update(text: str) -> bytes:
    """The deterministic Yjs update that creates a document holding ``text``."""
    doc, ytext = new_doc(client_id=SEED_CLIENT_ID)
    if text:
        ytext.insert(0, text)
    return doc.get_update()


def text_of(*updates: bytes) -> str:
    return str(doc_from_updates(*updates)[1])


def diff_ops(old: str, new: str) -> Iterator[tuple[int, int, str]]:
    """Minimal-ish edits turning ``old`` into ``new`` as ``(start, end, replacement)`` in Python
    indices of ``old``, in ascending order and non-overlapping."""
    if old == new:
        return
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    a = old[prefix : len(old) - suffix]
    b = new[prefix : len(new) - suffix]
    if not a or not b or len(a) + len(b) > 2 * _CHAR_DIFF_LIMIT:
        if len(a) + len(b) > 2 * _CHAR_DIFF_LIMIT and a and b:
            yield from _line_diff(a, b, prefix)
        else:
            yield prefix, prefix + len(a), b
        return
    yield from _char_diff(a, b, prefix)


def _char_diff(a: str, b: str, base: int) -> Iterator[tuple[int, int, str]]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield base + i1, base + i2, b[j1:j2]


def _line_diff(a: str, b: str, base: int) -> Iterator[tuple[int, int, str]]:
    a_lines = a.splitlines(keepends=True)
    b_lines = b.splitlines(keepends=True)
    a_starts = [0]
    for line in a_lines:
        a_starts.append(a_starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_part = a[a_starts[i1] : a_starts[i2]]
        new_part = "".join(b_lines[j1:j2])
        start = base + a_starts[i1]
        if old_part and new_part and len(old_part) + len(new_part) <= 2 * _CHAR_DIFF_LIMIT:
            yield from _char_diff(old_part, new_part, start)
        else:
            yield start, start + len(old_part), new_part


def apply_diff(ytext: Text, old: str, new: str) -> int:
    """Turn ``ytext`` (whose value is ``old``) into ``new`` with minimal inserts and deletes.

    Call it inside ``doc.transaction(origin=...)`` so that the edits form one update. Returns
    the number of operations applied.
    """
    ops = list(diff_ops(old, new))
    # Apply from the end so that the offsets of earlier operations stay valid in ``old``.
    for start, end, replacement in reversed(ops):
        byte_start = utf8_offset(old, start)
        if end > start:
            byte_end = byte_start + len(old[start:end].encode("utf-8"))
            del ytext[byte_start:byte_end]
        if replacement:
            ytext.insert(byte_start, replacement)
    return len(ops)


# --- live typing: one edit as several small sequential steps ----------------------------------

TypingStep = tuple[int, int, str]  # (start, end, insert) in Python indices of the text before it
_WORD_RE = re.compile(r"\s*\S+\s*|\s+")


def _pieces(text: str, chunk_chars: int) -> list[str]:
    """``text`` cut into pieces of about ``chunk_chars`` code points, at word ends if possible."""
    pieces: list[str] = []
    current = ""
    for word in _WORD_RE.findall(text):
        while len(word) > chunk_chars:  # a very long word: cut it
            room = chunk_chars - len(current)
            current, word = current + word[:room], word[room:]
            pieces.append(current)
            current = ""
        if current and len(current) + len(word) > chunk_chars:
            pieces.append(current)
            current = ""
        current += word
    if current:
        pieces.append(current)
    return pieces


def typing_steps(
    old: str, new: str, *, chunk_chars: int = 20, max_steps: int = 40
) -> list[list[TypingStep]]:
    """The minimal diff from ``old`` to ``new`` as at most ``max_steps`` groups of small steps,
    the way a person would type it: each changed span is deleted, then its new text is typed a
    few words (about ``chunk_chars``) at a time. Applying every group in order with
    ``apply_steps`` gives exactly ``new``."""
    steps: list[TypingStep] = []
    shift = 0
    for start, end, replacement in diff_ops(old, new):
        at = start + shift
        if end > start:
            steps.append((at, at + end - start, ""))
        for piece in _pieces(replacement, max(1, chunk_chars)):
            steps.append((at, at, piece))
            at += len(piece)
        shift += len(replacement) - (end - start)
    if not steps:
        return []
    per_group = -(-len(steps) // max(1, max_steps))  # ceil
    return [steps[i : i + per_group] for i in range(0, len(steps), per_group)]


def apply_steps(text: str, steps: list[TypingStep]) -> str:
    for start, end, insert in steps:
        text = text[:start] + insert + text[end:]
    return text
