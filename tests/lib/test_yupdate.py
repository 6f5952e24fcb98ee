"""collab/lib/yupdate.py: Yjs updates read far enough to judge them before a room applies them
(issue 28: a cut inside a surrogate pair, structs that start past the document's clock)."""

from __future__ import annotations

from pycrdt import Array, Doc, Map, Text, XmlElement, XmlFragment, XmlText, get_state

from collab.lib import yupdate
from collab.realtime.yprotocol import decode_state_vector


def _ends(update: yupdate.Update) -> dict[int, int]:
    ends: dict[int, int] = {}
    for struct in update.structs:
        if not struct.skip:
            ends[struct.client] = max(ends.get(struct.client, 0), struct.end)
    return ends


def _doc_with_every_kind_of_content() -> Doc:
    doc = Doc(client_id=7)
    text = doc.get("content", type=Text)
    text.insert(0, "plain ñ 日本 😀🎌 e\u0301")
    text.insert(3, "bold", attrs={"bold": True})
    text.insert_embed(2, {"image": "x.png"})
    del text[0:2]
    values = doc.get("values", type=Map)
    values["number"] = 1.5
    values["int"] = -123456789
    values["big"] = 2**40
    values["flag"] = True
    values["none"] = None
    values["text"] = "ñ😀"
    values["list"] = [1, "two", {"three": [3.0, None]}]
    values["bytes"] = b"\x00\x01"
    values["nested"] = Map({"inner": Text("inner 😀")})
    items = doc.get("items", type=Array)
    items.extend([1, 2, 3, Array(["a", "b"])])
    del items[1]
    xml = doc.get("xml", type=XmlFragment)
    xml.children.append(XmlElement("p", {"class": "x"}, [XmlText("hello 😀")]))
    return doc


def test_every_kind_of_content_decodes_and_ends_where_yrs_says():
    doc = _doc_with_every_kind_of_content()
    update = doc.get_update()

    decoded = yupdate.decode(update)

    assert _ends(decoded) == decode_state_vector(get_state(update))
    assert decoded.deletes  # the deleted characters and array item


def test_a_cut_inside_an_emoji_is_told_apart_from_a_cut_beside_it():
    doc = Doc(client_id=1)
    text = doc.get("content", type=Text)
    text.insert(0, "a😀b")  # UTF-16 clocks: a=0, 😀=1-2, b=3
    boundaries = yupdate.Boundaries()
    boundaries.add(yupdate.decode(doc.get_update()))
    state = {1: 4}

    def delete(clock: int, length: int) -> yupdate.Update:
        # one delete range of client 1, as Yjs encodes it (no structs)
        return yupdate.Update(structs=(), deletes=((1, clock, length),))

    assert yupdate.check(delete(1, 2), state, boundaries) is yupdate.Verdict.GOOD
    assert yupdate.check(delete(0, 1), state, boundaries) is yupdate.Verdict.GOOD
    assert yupdate.check(delete(2, 1), state, boundaries) is yupdate.Verdict.SPLITS_PAIR
    assert yupdate.check(delete(1, 1), state, boundaries) is yupdate.Verdict.SPLITS_PAIR


def test_an_insert_after_the_first_half_of_an_emoji_splits_it():
    # what the official Yjs client sends for text.insert(2, "X") into "a😀b" (clock 1 is the
    # emoji's first half): origin (1, 1), right origin (1, 2)
    base = bytes.fromhex("01010100040107636f6e74656e740661f09f98806200")
    insert = bytes.fromhex("01010200c401010102015800")
    boundaries = yupdate.Boundaries()
    boundaries.add(yupdate.decode(base))

    verdict = yupdate.check(yupdate.decode(insert), {1: 4}, boundaries)

    assert verdict is yupdate.Verdict.SPLITS_PAIR


def test_an_update_that_starts_past_the_documents_clock_is_a_gap():
    writer = Doc(client_id=5)
    text = writer.get("content", type=Text)
    text.insert(0, "hello")
    first = writer.get_update()
    text.insert(5, " refused")
    refused_to = writer.get_state()
    text.insert(0, "later ")
    later = writer.get_update(refused_to)
    server = Doc()
    server.apply_update(first)
    state = decode_state_vector(server.get_state())

    verdict = yupdate.check(yupdate.decode(later), state, yupdate.Boundaries())

    assert verdict is yupdate.Verdict.GAP
    assert yupdate.check(yupdate.decode(first), state, yupdate.Boundaries()) is (
        yupdate.Verdict.GOOD
    )  # a duplicate is harmless


def test_typing_on_after_what_the_document_has_is_good():
    writer = Doc(client_id=5)
    text = writer.get("content", type=Text)
    text.insert(0, "😀 hello")
    first = writer.get_update()
    before = writer.get_state()
    text.insert(len("😀 hello".encode()), " 🎌 there")
    del text[0:4]  # the whole emoji (pycrdt counts UTF-8 bytes)
    second = writer.get_update(before)
    server = Doc()
    server.apply_update(first)
    boundaries = yupdate.Boundaries()
    boundaries.add(yupdate.decode(first))
    state = decode_state_vector(server.get_state())

    assert yupdate.check(yupdate.decode(second), state, boundaries) is yupdate.Verdict.GOOD
    # and so is the whole state again, as a Yjs client's answer to a sync step 1 can be
    assert yupdate.check(yupdate.decode(writer.get_update()), state, boundaries) is (
        yupdate.Verdict.GOOD
    )


def test_a_cut_the_document_already_holds_is_not_refused_again():
    # a document saved before updates were checked, holding a delete of half an emoji
    base = bytes.fromhex("01010100040107636f6e74656e740661f09f98806200")
    split_delete = yupdate.Update(structs=(), deletes=((1, 2, 1),))
    boundaries = yupdate.Boundaries()
    boundaries.add(yupdate.decode(base))
    boundaries.add(split_delete)  # as loading its state applies it

    # then a client's delete set that carries the same cut (each of its sync answers) is taken
    assert yupdate.check(split_delete, {1: 4}, boundaries) is yupdate.Verdict.GOOD
