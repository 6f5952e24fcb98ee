"""Reading a Yjs update (v1, the encoding y-websocket sends) far enough to judge it before it
touches a document: which structs it adds (client, clock, length, origins, string content) and
which ranges it deletes.

Two kinds of update look fine to yrs (pycrdt) and still break a document (DESIGN.md, "Hazards
found in this product"; issue 28):

* one that cuts a UTF-16 surrogate pair (an insert whose origin is the first half of an emoji, a
  delete that takes one half): the official Yjs client turns both halves into U+FFFD, yrs applies
  the cut differently, and from then on every replica holds a different text (upstream y-crdt
  PR #399);
* one whose structs start past the clock the document holds for that client (they follow
  structs that never arrived, such as a refused too-large update): yrs puts them into its text
  but emits an empty update, so the text shows what the update log never gets.

``check`` says which of the two an update is, from the document's state vector and its
``Boundaries`` (the clocks that fall inside a surrogate pair), which the room keeps up to date
with ``Boundaries.add`` for every change it applies. Yjs clocks count UTF-16 code units.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

ID = tuple[int, int]  # (client, clock)

_GC = 0
_DELETED = 1
_JSON = 2
_BINARY = 3
_STRING = 4
_EMBED = 5
_FORMAT = 6
_TYPE = 7
_ANY = 8
_DOC = 9
_SKIP = 10

_XML_ELEMENT = 3
_XML_HOOK = 5

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class UpdateError(ValueError):
    """The bytes are not a Yjs v1 update."""


@dataclass(frozen=True)
class Struct:
    client: int
    clock: int
    length: int
    skip: bool = False  # a Skip struct (a hole in a merged update), or GC
    origin: ID | None = None
    right_origin: ID | None = None
    parent: ID | None = None
    text: str | None = None  # the content of a string item

    @property
    def end(self) -> int:
        return self.clock + self.length


@dataclass(frozen=True)
class Update:
    structs: tuple[Struct, ...]
    deletes: tuple[tuple[int, int, int], ...]  # (client, clock, length)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise UpdateError("truncated update")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def var_uint(self) -> int:
        value = shift = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 70:
                raise UpdateError("var-uint too long")

    def var_int(self) -> None:
        byte = self.byte()
        while byte & 0x80:
            byte = self.byte()

    def skip(self, count: int) -> None:
        if self.pos + count > len(self.data):
            raise UpdateError("truncated update")
        self.pos += count

    def var_bytes(self) -> bytes:
        length = self.var_uint()
        start = self.pos
        self.skip(length)
        return self.data[start : self.pos]

    def var_string(self) -> str:
        try:
            return self.var_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise UpdateError("string is not UTF-8") from None

    def id(self) -> ID:
        return (self.var_uint(), self.var_uint())

    def any(self, depth: int = 0) -> None:
        """Skip one lib0 ``any`` value."""
        if depth > 100:
            raise UpdateError("value nested too deeply")
        kind = self.byte()
        if kind in (127, 126, 121, 120):  # undefined, null, false, true
            return
        if kind == 125:
            self.var_int()
        elif kind == 124:
            self.skip(4)
        elif kind in (123, 122):
            self.skip(8)
        elif kind == 119:
            self.var_string()
        elif kind == 118:
            for _ in range(self.var_uint()):
                self.var_string()
                self.any(depth + 1)
        elif kind == 117:
            for _ in range(self.var_uint()):
                self.any(depth + 1)
        elif kind == 116:
            self.var_bytes()
        else:
            raise UpdateError(f"unknown value type {kind}")


def has_astral(text: str) -> bool:
    """Does ``text`` hold a character outside the Basic Multilingual Plane (two UTF-16 units)?"""
    return _ASTRAL.search(text) is not None


def utf16_length(text: str) -> int:
    return len(text) + len(_ASTRAL.findall(text))


def inside_pairs(text: str, clock: int) -> list[int]:
    """The clocks of ``text`` (starting at ``clock``) that fall inside a surrogate pair: the
    second half of each character outside the Basic Multilingual Plane."""
    return [clock + match.start() + n + 1 for n, match in enumerate(_ASTRAL.finditer(text))]


def decode(data: bytes) -> Update:
    reader = _Reader(data)
    structs: list[Struct] = []
    for _ in range(reader.var_uint()):
        count = reader.var_uint()
        client = reader.var_uint()
        clock = reader.var_uint()
        for _ in range(count):
            struct = _struct(reader, client, clock)
            structs.append(struct)
            clock = struct.end
    deletes = []
    for _ in range(reader.var_uint()):
        client = reader.var_uint()
        for _ in range(reader.var_uint()):
            deletes.append((client, reader.var_uint(), reader.var_uint()))
    if reader.pos != len(data):
        raise UpdateError("trailing bytes after the update")
    return Update(tuple(structs), tuple(deletes))


def _struct(reader: _Reader, client: int, clock: int) -> Struct:
    info = reader.byte()
    ref = info & 0x1F
    if ref in (_GC, _SKIP):
        return Struct(client, clock, reader.var_uint(), skip=True)
    origin = reader.id() if info & 0x80 else None
    right_origin = reader.id() if info & 0x40 else None
    parent: ID | None = None
    if not info & 0xC0:  # no origin: the parent is written out
        if reader.var_uint() == 1:
            reader.var_string()  # a root type, by name
        else:
            parent = reader.id()
        if info & 0x20:
            reader.var_string()  # parent sub (a map key)
    text: str | None = None
    length = 1
    if ref == _DELETED:
        length = reader.var_uint()
    elif ref == _JSON:
        length = reader.var_uint()
        for _ in range(length):
            reader.var_string()
    elif ref == _BINARY:
        reader.var_bytes()
    elif ref == _STRING:
        text = reader.var_string()
        length = utf16_length(text)
    elif ref == _EMBED:
        reader.var_string()
    elif ref == _FORMAT:
        reader.var_string()
        reader.var_string()
    elif ref == _TYPE:
        if reader.var_uint() in (_XML_ELEMENT, _XML_HOOK):
            reader.var_string()
    elif ref == _ANY:
        length = reader.var_uint()
        for _ in range(length):
            reader.any()
    elif ref == _DOC:
        reader.var_string()
        reader.any()
    else:
        raise UpdateError(f"unknown content type {ref}")
    if length == 0:
        raise UpdateError("a struct of length 0")
    return Struct(client, clock, length, False, origin, right_origin, parent, text)


class Boundaries:
    """The clocks of a document that fall inside a surrogate pair, per client: a cut (an
    origin, the start or end of a delete) is allowed anywhere else."""

    def __init__(self) -> None:
        self._inside: dict[int, set[int]] = {}

    @classmethod
    def of(cls, state: bytes) -> Boundaries:
        """The boundaries of a document whose whole state is ``state``."""
        boundaries = cls()
        boundaries.add(decode(state))
        return boundaries

    def add(self, update: Update) -> None:
        """Take in an update the document has applied."""
        for struct in update.structs:
            if struct.text is not None:
                found = inside_pairs(struct.text, struct.clock)
                if found:
                    self._inside.setdefault(struct.client, set()).update(found)
        # A cut the document already holds (made before updates were checked) is no longer
        # refused: every client's delete set carries it, in each answer to a sync step 1.
        for struct in update.structs:
            self._inside.get(struct.client, set()).discard(struct.clock)
        for client, clock, length in update.deletes:
            inside = self._inside.get(client, set())
            inside.discard(clock)
            inside.discard(clock + length)

    def splits(self, client: int, clock: int) -> bool:
        """Would a cut just before ``clock`` split a surrogate pair?"""
        return clock in self._inside.get(client, ())


class Verdict(enum.Enum):
    GOOD = "good"
    SPLITS_PAIR = "splits a surrogate pair"
    GAP = "starts past the document's clock for its client"


def check(update: Update, state: dict[int, int], boundaries: Boundaries) -> Verdict:
    """Whether ``update`` may be applied to a document whose state vector is ``state``."""
    known = dict(state)  # grows with this update's own structs, which later ones may reference
    own = Boundaries()
    own.add(update)

    def splits(client: int, clock: int) -> bool:
        return boundaries.splits(client, clock) or own.splits(client, clock)

    for struct in update.structs:
        have = known.get(struct.client, 0)
        if struct.skip:
            continue
        if struct.clock > have:
            return Verdict.GAP
        # Only the part past ``have`` is new: it must not start inside a pair.
        if struct.clock < have < struct.end and own.splits(struct.client, have):
            return Verdict.SPLITS_PAIR
        known[struct.client] = max(have, struct.end)
    for struct in update.structs:
        if struct.skip:
            continue
        for dependency in (struct.origin, struct.right_origin, struct.parent):
            if dependency is not None and dependency[1] >= known.get(dependency[0], 0):
                return Verdict.GAP  # it depends on a struct the document does not have
        if struct.origin is not None and splits(struct.origin[0], struct.origin[1] + 1):
            return Verdict.SPLITS_PAIR
        if struct.right_origin is not None and splits(*struct.right_origin):
            return Verdict.SPLITS_PAIR
    for client, clock, length in update.deletes:
        if splits(client, clock) or splits(client, clock + length):
            return Verdict.SPLITS_PAIR
    return Verdict.GOOD
