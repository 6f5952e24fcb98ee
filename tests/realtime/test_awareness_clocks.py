"""What a room's sockets are sent for presence is ordered by the room's own clock per client id
(collab/realtime/awareness.py ``Awareness.stamped``): y-protocols takes a state only with a
clock above the one it holds, and a reconnect leaves both sides holding raised clocks."""

from __future__ import annotations

from dataclasses import dataclass

from collab.realtime.awareness import Awareness
from collab.realtime.yprotocol import AwarenessEntry


@dataclass(eq=False)
class _Socket:
    user_id: int | None
    label: str
    can_edit: bool = True
    display_name: str = ""
    role: str = "editor"


def _yjs_takes(held: dict[int, int], entry: AwarenessEntry) -> bool:
    """y-protocols ``applyAwarenessUpdate``'s rule, for a remote client id."""
    current = held.get(entry.client_id, -1)
    taken = current < entry.clock
    if taken:
        held[entry.client_id] = entry.clock
    return taken


def test_after_a_reconnect_each_page_takes_the_others_state_at_once() -> None:
    room = Awareness()
    alice, bob = _Socket(1, "alice"), _Socket(2, "bob")
    alice_id, bob_id = 11, 22
    state = '{"user":{"name":"x"}}'
    alice_page: dict[int, int] = {}  # clocks each page holds for the other
    bob_page: dict[int, int] = {}
    for entry in room.stamped(room.receive(alice, (AwarenessEntry(alice_id, 7, state),))):
        assert _yjs_takes(bob_page, entry)
    for entry in room.stamped(room.receive(bob, (AwarenessEntry(bob_id, 3, state),))):
        assert _yjs_takes(alice_page, entry)

    # bob's socket drops: the room clears bob (clock + 1) and bob's page clears alice locally
    # (y-websocket raises her clock by one as it does)
    for entry in room.stamped(room.forget(bob)):
        assert _yjs_takes(alice_page, entry)
        assert entry.removed
    bob_page[alice_id] += 1

    # bob's new socket: the room's snapshot, then bob's state with the clock bob's page had
    bob2 = _Socket(2, "bob")
    snapshot = room.stamped(room.states(), snapshot=True)
    assert [_yjs_takes(bob_page, e) for e in snapshot] == [True], "bob would not see alice"
    mine = room.receive(bob2, (AwarenessEntry(bob_id, 3, state),))
    assert [_yjs_takes(alice_page, e) for e in room.stamped(mine)] == [True], (
        "alice would not see bob"
    )


def test_the_clocks_sent_only_go_up_and_never_below_what_a_client_sent() -> None:
    room = Awareness()
    sent = [room.stamped([AwarenessEntry(5, clock, "{}")])[0].clock for clock in (4, 2, 2, 9, 1)]
    assert sent == [4, 5, 6, 9, 10]


def test_a_reconnecting_page_takes_its_client_id_over_from_its_old_socket_only() -> None:
    """A reconnect's new socket can speak before the old one has closed: the same person's new
    socket takes the client id over (the old socket's leaving then clears nothing); another
    person's socket still cannot speak for it."""
    room = Awareness()
    old, new, mallory = _Socket(2, "bob"), _Socket(2, "bob"), _Socket(3, "mallory")
    state = '{"user":{"name":"bob"}}'
    room.receive(old, (AwarenessEntry(22, 3, state),))
    assert room.receive(mallory, (AwarenessEntry(22, 9, '{"user":{"name":"x"}}'),)) == []
    assert len(room.receive(new, (AwarenessEntry(22, 3, state),))) == 1
    assert room.forget(old) == []
    assert [entry.client_id for entry in room.states()] == [22]
    assert [entry.removed for entry in room.forget(new)] == [True]


def test_the_same_persons_other_tab_echoing_a_state_does_not_take_it_over() -> None:
    """Two tabs of one person: each page re-sends the other's state it receives (y-websocket
    does). Taking the client id over on that echo made the tabs hand it back and forth, each
    time one clock higher: a thousand messages a second with both tabs idle."""
    room = Awareness()
    tab_a, tab_b = _Socket(2, "bob"), _Socket(2, "bob")
    room.receive(tab_a, (AwarenessEntry(31, 1, '{"user":{"name":"bob"}}'),))
    room.receive(tab_b, (AwarenessEntry(32, 1, '{"user":{"name":"bob"}}'),))

    # tab a echoes b's state, with the clock the room sent it
    assert room.receive(tab_a, (AwarenessEntry(32, 2, '{"user":{"name":"bob"}}'),)) == []
    assert [entry.removed for entry in room.forget(tab_b)] == [True]  # b's is still tab b's


def test_a_page_echoing_an_agents_departure_is_not_shared_on() -> None:
    """An agent's presence ends (through the relay); every page re-sends the removal it was
    sent. Accepted and shared one clock higher, each echo was echoed again by the others:
    about 950 removals of the same agent per page in the journey test."""
    room = Awareness()
    page = _Socket(2, "bob")
    room.receive(page, (AwarenessEntry(41, 1, '{"user":{"name":"bob"}}'),))
    agent = 1796341401933  # agents stamp their clock with the time
    room.receive_remote((AwarenessEntry(99, agent, '{"user":{"name":"Eddie"}}'),))
    room.receive_remote((AwarenessEntry(99, agent + 1, "null"),))

    assert room.receive(page, (AwarenessEntry(99, agent + 2, "null"),)) == []
    assert [entry.removed for entry in room.receive(page, (AwarenessEntry(41, 2, "null"),))] == [
        True
    ]  # its own departure still goes out
