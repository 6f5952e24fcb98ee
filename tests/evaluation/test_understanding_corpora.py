"""The understanding measure (agents/evaluation/understanding.py): its figures can fail, a
trivial policy does not meet them, and the vendored corpora are the frozen ones."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.evaluation import understanding as u
from agents.evaluation import understanding_sgd as s
from agents.policies.base import Situation, SlotState
from agents.policies.templates import TaskTemplate

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def fixed_reader(readings: dict[str, dict[str, str]]) -> Callable[..., Situation]:
    """A reader that finds, in the request and the chat, exactly the values `readings` lists
    per text: the figures are then checked against a known reading, not the product's."""

    def reader(
        *, request: str, template: TaskTemplate, chat: tuple[str, ...] = (), **_: object
    ) -> Situation:
        found: dict[str, str] = {}
        for text in (*chat, request):
            found.update(readings.get(text, {}))
        return Situation(
            request=request,
            template=template.kind,
            slots=tuple(
                SlotState(spec, found[spec.name], "request", 1.0)
                if spec.name in found
                else SlotState(spec)
                for spec in template.slots
            ),
        )

    return reader


def _dialogue(*turns: tuple[str, str, list[dict[str, object]], str]) -> dict[str, object]:
    return {
        "dialogue_id": "t-1",
        "services": ["Restaurants_9"],
        "turns": [
            {
                "speaker": speaker,
                "utterance": text,
                "frames": [
                    {
                        "service": "Restaurants_9",
                        "actions": acts,
                        "slots": [],
                        "active_intent": intent,
                    }
                ],
            }
            for speaker, text, acts, intent in turns
        ],
    }


SCHEMA = {
    "service_name": "Restaurants_9",
    "description": "Book a table",
    "slots": [
        {
            "name": "date",
            "description": "Date of the booking",
            "is_categorical": False,
            "possible_values": [],
        },
        {
            "name": "number_of_seats",
            "description": "Number of seats to reserve",
            "is_categorical": True,
            "possible_values": ["1", "2", "3", "4", "5", "6"],
        },
    ],
    "intents": [
        {
            "name": "Reserve",
            "description": "Reserve a table",
            "is_transactional": True,
            "required_slots": ["date", "number_of_seats"],
            "optional_slots": {},
            "result_slots": [],
        }
    ],
}


def _inform(slot: str, value: str, canonical: str) -> dict[str, object]:
    return {"act": "INFORM", "slot": slot, "values": [value], "canonical_values": [canonical]}


def _request(slot: str) -> dict[str, object]:
    return {"act": "REQUEST", "slot": slot, "values": [], "canonical_values": []}


def test_a_date_read_from_a_user_turn_counts_as_right_and_a_wrong_one_as_misread() -> None:
    data = {
        "schemas": [SCHEMA],
        "dialogues": [
            _dialogue(
                (
                    "USER",
                    "A table on the 8th please",
                    [_inform("date", "the 8th", "2019-03-08")],
                    "Reserve",
                ),
                ("SYSTEM", "For how many?", [_request("number_of_seats")], ""),
                # The annotation says the 9th: a reading of "the 8th" must count as misread.
                (
                    "USER",
                    "It is the 8th, for two",
                    [_inform("date", "the 8th", "2019-03-09")],
                    "Reserve",
                ),
            )
        ],
    }
    reader = fixed_reader(
        {
            "A table on the 8th please": {"date": "2019-03-08"},
            "It is the 8th, for two": {"date": "2019-03-08", "number_of_seats": "2"},
        }
    )
    report = s.measure_sgd(data, reader=reader)
    dates = report.by_type["date"]
    assert dates.right == 1
    assert dates.misread == 1


def test_sgd_ask_decision_is_scored_against_the_request_acts() -> None:
    data = {
        "schemas": [SCHEMA],
        "dialogues": [
            _dialogue(
                (
                    "USER",
                    "A table on the 8th please",
                    [_inform("date", "the 8th", "2019-03-08")],
                    "Reserve",
                ),
                ("SYSTEM", "For how many?", [_request("number_of_seats")], ""),
                ("USER", "For 2 people", [_inform("number_of_seats", "2", "2")], "Reserve"),
                (
                    "SYSTEM",
                    "Booked.",
                    [{"act": "NOTIFY_SUCCESS", "slot": "", "values": [], "canonical_values": []}],
                    "",
                ),
            )
        ],
    }
    reader = fixed_reader(
        {
            "A table on the 8th please": {"date": "2019-03-08"},
            "For 2 people": {"number_of_seats": "2"},
        }
    )
    report = s.measure_sgd(data, reader=reader)
    # the product asks when the seats are missing, and not once both are given
    assert report.ask["ask_when_blocked"].pairs == [(True, True), (False, False)]
    assert u.mcc(report.ask["ask_when_blocked"].pairs) == pytest.approx(1.0)
    # a trivial policy's MCC is undefined or worse: it cannot meet the product's figure
    for name in ("never ask", "always ask"):
        assert (u.mcc(report.ask[name].pairs) or 0.0) < 1.0


def _blind_item(**extra: object) -> dict[str, object]:
    item: dict[str, object] = {
        "id": "x",
        "kind": "meeting_brief",
        "task": {"title": "Budget review", "goal": "", "created": "2027-03-01"},
        "document": "",
        "chat": [],
        "memory": [],
        "requester": "Dana",
        "request": "@Assistant brief for 12 March 2027 with Sam and Jo to decide the budget",
        "category": "clear",
        "values": {
            "meeting_date": {
                "value": "2027-03-12",
                "span": "12 March 2027",
                "source": "request",
                "inferred": False,
            },
            "attendees": {
                "value": "Sam, Jo",
                "span": "Sam and Jo",
                "source": "request",
                "inferred": False,
            },
            "purpose": {
                "value": "decide the budget",
                "span": "decide the budget",
                "source": "request",
                "inferred": False,
            },
        },
        "open": [],
        "contested": [],
        "needs_question": False,
        "question_targets": [],
    }
    item.update(extra)
    return item


ALL_THREE = {"meeting_date": "2027-03-12", "attendees": "Sam, Jo", "purpose": "decide the budget"}


def test_a_clear_request_read_right_is_not_asked_about() -> None:
    item = _blind_item()
    report = u.measure_blind([item], reader=fixed_reader({str(item["request"]): ALL_THREE}))
    request = report.by_source["request"]
    assert request.right == 3
    assert report.ask["ask_when_blocked"].pairs == [(False, False)]
    assert report.ask["always ask"].pairs == [(False, True)]  # over-asking for the trivial one


def test_a_label_the_reader_does_not_find_counts_as_missed_and_its_question_as_redundant() -> None:
    # "Pat's usual trio" names nobody: a reader cannot find the attendees the label claims, so
    # the figure must show a miss (and the question about them as redundant), not a pass.
    item = _blind_item(
        request="@Assistant brief for 12 March 2027 with Pat's usual trio to decide the budget",
    )
    item["values"]["attendees"] = {  # type: ignore[index]
        "value": "Sam, Jo",
        "span": "Pat's usual trio",
        "source": "request",
        "inferred": False,
    }
    report = u.measure_blind([item])
    assert report.by_source["request"].missed + report.by_source["request"].misread >= 1
    tally = report.ask["ask_when_blocked"]
    if tally.pairs[0][1]:
        assert tally.redundant >= 1


def test_a_value_read_for_a_slot_nobody_gave_counts_as_invented() -> None:
    item = _blind_item()
    invented = dict(ALL_THREE, location="Room 4")
    report = u.measure_blind([item], reader=fixed_reader({str(item["request"]): invented}))
    assert report.invented == 1


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_the_vendored_sgd_sample_is_the_frozen_one(split: str) -> None:
    sums = {
        name: digest
        for digest, name in (
            line.split() for line in (DATA / "sgd" / "SHA256SUMS").read_text().splitlines()
        )
    }
    path = DATA / "sgd" / f"{split}.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sums[f"bench/data/sgd/{split}.json"]
    data = json.loads(path.read_text())
    assert data["licence"] == "CC BY-SA 4.0"
    assert data["dialogues"]


@pytest.mark.parametrize(
    "name",
    [
        "understanding/dev.jsonl",
        "understanding/test.jsonl",
        "usefulness/dev.jsonl",
        "usefulness/test.jsonl",
    ],
)
def test_the_blind_corpora_are_the_frozen_ones(name: str) -> None:
    # Written by a helper that never saw the code, frozen before any tuning (BLIND_CORPORA.md).
    sums = {
        path: digest
        for digest, path in (
            line.split() for line in (DATA / "BLIND_SHA256SUMS").read_text().splitlines()
        )
    }
    assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == sums[name]
