from __future__ import annotations

from datetime import date

import pytest

from agents.policies.base import Interpretation, Signals
from agents.policies.memory_facts import MemoryFact
from agents.policies.signals import ExtractedSlot, SlotExtraction
from agents.policies.situation import build_situation
from agents.policies.situation_sources import asking_preference
from agents.policies.templates import get_template, parse_template

TODAY = date(2026, 3, 2)
TRAVEL = get_template("travel_plan")


def fact(key, value, *, person_id=1):
    return MemoryFact(
        item_id=None,
        person_id=person_id,
        person_name=f"p{person_id}",
        key=key,
        value=value,
        scope="workspace",
        text=f"{key} = {value}",
    )


def test_the_request_chat_document_and_memory_each_answer_slots():
    situation = build_situation(
        request="Plan my trip to Lisbon",
        template=TRAVEL,
        chat=["We fly out on 4 May"],
        document="# Trip\nBudget: 1200 EUR\n",
        memory=[fact("slot:pace", "slow")],
        today=TODAY,
    )

    assert {s.name: (s.value, s.source) for s in situation.slots if s.answered} == {
        "destination": ("Lisbon", "request"),
        "start_date": ("2026-05-04", "chat"),
        "budget": ("EUR 1200", "document"),
        "pace": ("relaxed", "memory"),
    }


def test_an_answer_to_the_question_card_beats_the_request():
    situation = build_situation(
        request="Trip to Lisbon, packed schedule",
        template=TRAVEL,
        answers={"pace": "relaxed"},
        today=TODAY,
    )

    pace = situation.slot("pace")
    assert pace is not None
    assert (pace.value, pace.source, pace.confidence) == ("relaxed", "chat", 1.0)


def test_the_newest_chat_message_wins():
    situation = build_situation(
        request="Plan it",
        template=TRAVEL,
        chat=["Let's go to Oslo", "Actually, let's go to Bergen"],
        today=TODAY,
    )

    assert situation.slot("destination").value == "Bergen"  # type: ignore[union-attr]


def test_a_message_after_the_request_corrects_it_and_one_before_does_not():
    # the person corrects the agent after it acted: "the travelers should be 6" wins over the
    # "4 travelers" of the request; the same words said before the request do not
    corrected = build_situation(
        request="Trip to Lisbon for 4 travelers",
        template=TRAVEL,
        later=["Thanks. The travelers should be 6."],
        today=TODAY,
    )
    earlier = build_situation(
        request="Trip to Lisbon for 4 travelers",
        template=TRAVEL,
        chat=["The travelers should be 6."],
        today=TODAY,
    )

    assert corrected.slot("travelers").value == "6"  # type: ignore[union-attr]
    assert corrected.slot("travelers").source == "chat"  # type: ignore[union-attr]
    assert earlier.slot("travelers").value == "4"  # type: ignore[union-attr]


def test_a_sentence_about_the_past_in_the_document_answers_nothing():
    situation = build_situation(
        request="Plan it",
        template=TRAVEL,
        document="Last year we went to Paris on 3 June and spent €4000.",
        today=TODAY,
    )

    assert [s.name for s in situation.slots if s.answered] == []


def test_memory_given_as_slot_values_answers_those_slots():
    situation = build_situation(
        request="Plan a trip to Rome",
        template=TRAVEL,
        memory={"budget": "around 800 euros", "travellers": "2"},
        today=TODAY,
    )

    assert situation.slot("budget").value == "EUR 800"  # type: ignore[union-attr]
    assert situation.slot("travelers").source == "memory"  # type: ignore[union-attr]


def test_a_model_extraction_counts_as_stated_only_when_its_evidence_is_in_the_request():
    extraction = SlotExtraction(
        slots=[
            ExtractedSlot(slot="destination", value="Porto", confidence=0.8, evidence="porto"),
            ExtractedSlot(slot="budget", value="EUR 700", confidence=0.6, evidence="cheap"),
        ]
    )

    situation = build_situation(
        request="Somewhere like porto, nothing fancy",
        template=TRAVEL,
        extraction=extraction,
        today=TODAY,
    )

    destination, budget = situation.slot("destination"), situation.slot("budget")
    assert destination is not None
    assert destination.source == "request"
    assert budget is not None
    assert (budget.source, budget.answered) == ("model", False)


def test_a_conflicting_mention_stays_a_guess_so_it_can_be_asked():
    situation = build_situation(
        request="Rome, relaxed or packed, not sure", template=TRAVEL, today=TODAY
    )

    pace = situation.slot("pace")
    assert pace is not None
    assert not pace.answered


def test_a_free_form_task_takes_its_slots_from_the_model():
    situation = build_situation(
        request="Sort out the thing for Friday",
        extraction=SlotExtraction(
            slots=[
                ExtractedSlot(slot="deadline", value="Friday", confidence=0.9, evidence="Friday")
            ]
        ),
        signals=Signals(
            interpretations=(
                Interpretation(summary="a", values={"thing": "report"}),
                Interpretation(summary="b", values={"thing": "party"}),
            )
        ),
        today=TODAY,
    )

    assert situation.template is None
    assert [s.name for s in situation.slots] == ["deadline", "thing"]
    assert situation.slot("deadline").answered  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("facts", "preference"),
    [
        ([], ("normal", None)),
        ([fact("spelling", "british"), fact("asking", "less")], ("less", None)),
        ([fact("asking", "never")], ("never", None)),
        ([fact("asking", "at_most:1")], ("normal", 1)),
        ([fact("asking", "less"), fact("asking", "more")], ("more", None)),
    ],
)
def test_the_asking_preference_is_read_from_the_asking_fact(facts, preference):
    assert asking_preference(facts) == preference


def test_a_memory_sentence_is_not_parsed_back_into_a_preference():
    # The key says normal; prose that reads like "ask me less" is the prompt's, not the policy's.
    assert asking_preference([fact("tone", "casual")]) == ("normal", None)


def test_a_weekday_in_passing_in_the_document_is_not_the_trip_date():
    situation = build_situation(
        request="Plan a trip to Kraków for four people, budget CHF 1,200.",
        template=TRAVEL,
        document=(
            "# Trip\n\nNotes from Monday (keep these):\n- Check with legal.\n\n"
            "We settled on 1 May 2026.\n"
        ),
        today=TODAY,
    )
    start = situation.slot("start_date")
    assert start.value != "2026-03-09" or start.confidence < 0.5
    assert "start_date" not in [
        s.name for s in situation.slots if s.answered and s.value == "2026-03-09"
    ]


def test_the_name_of_someone_in_the_conversation_is_not_a_free_text_value():
    blog = get_template("blog_post")
    situation = build_situation(
        request="Write a blog post for Łukasz, for experts.",
        template=blog,
        people=["Łukasz Nowak"],
        today=TODAY,
    )
    assert situation.slot("topic").value != "Łukasz"


def test_a_vague_day_is_a_guess_worth_a_question():
    from agents.policies.parse_dates import find_dates

    assert find_dates("the outage the other day", today=TODAY)[0].confidence < 0.5
    assert find_dates("the outage on 1 March 2026", today=TODAY)[0].confidence >= 0.9


def test_a_request_that_contradicts_a_labelled_free_text_value_is_a_conflict_naming_both():
    blog = get_template("blog_post")
    situation = build_situation(
        request="Write a blog post about accessible forms, for beginners.",
        template=blog,
        document="# Post\n\nTopic: café culture in Zürich\n",
        today=TODAY,
    )
    [conflict] = [c for c in situation.conflicts if c.slot == "topic"]
    assert [v for _where, v in conflict.values] == ["accessible forms", "café culture in Zürich"]


def test_a_labelled_value_that_shares_words_with_the_request_is_no_conflict():
    blog = get_template("blog_post")
    situation = build_situation(
        request="Write a blog post about the Q3 roadmap, for experts.",
        template=blog,
        document="# Post\n\nTopic: Q3 roadmap review\n",
        today=TODAY,
    )
    assert not [c for c in situation.conflicts if c.slot == "topic"]


def test_a_surer_sentence_later_in_the_document_wins_over_a_weekday_in_passing():
    meeting = get_template("meeting_brief")
    situation = build_situation(
        request="Prepare a meeting brief with Björn and Aroha about budget cuts.",
        template=meeting,
        document="# Brief\n\nNotes from Monday:\n- Ping Ana.\n\nWe settled on 8 May 2026.",
        today=TODAY,
    )
    assert situation.slot("meeting_date").value == "2026-05-08"
    assert situation.slot("meeting_date").source == "document"


def test_a_title_naming_who_the_work_is_for_is_no_value_and_no_conflict():
    meeting = get_template("meeting_brief")
    situation = build_situation(
        request="Prepare a meeting brief with Björn and Aroha.",
        template=meeting,
        goal="Meeting brief for José",
        document="# Brief\n\nPurpose: budget cuts\n",
        people=["José Martínez"],
        today=TODAY,
    )
    assert not situation.conflicts
    assert situation.slot("purpose").value == "budget cuts"


def test_a_heading_that_repeats_the_task_title_is_not_read_as_a_value():
    meeting = get_template("meeting_brief")

    situation = build_situation(
        request="Prepare a meeting brief: on 25 March 2027; with Hiroshi and Mei.",
        template=meeting,
        goal="Meeting brief for Hiroshi",
        document="# Meeting brief for Hiroshi\n\nScope: the office move.\n",
        people=["Hiroshi Tanaka"],
        today=TODAY,
    )

    purpose = situation.slot("purpose")
    assert purpose is not None
    assert (purpose.value, purpose.source) == ("the office move", "document")


def test_a_relative_day_in_an_earlier_chat_message_is_only_a_guess():
    meeting = get_template("meeting_brief")

    situation = build_situation(
        request="Prepare a meeting brief about the Q3 roadmap with Olúmìdé and Fatima.",
        template=meeting,
        chat=["Hi Olúmìdé, I'll review this one tomorrow."],
        document="# Brief\n\nWe settled on 15 May 2026.\n",
        today=TODAY,
    )
    dated_in_chat = build_situation(
        request="Prepare a meeting brief about the Q3 roadmap with Olúmìdé and Fatima.",
        template=meeting,
        chat=["Let's meet on 12 March, in Kraków."],
        today=TODAY,
    )

    meeting_date = situation.slot("meeting_date")
    assert meeting_date is not None
    assert (meeting_date.value, meeting_date.source) == ("2026-05-15", "document")
    assert dated_in_chat.slot("meeting_date").source == "chat"  # type: ignore[union-attr]


def test_an_unlabelled_line_gives_the_one_open_place():
    invitation = parse_template(
        {
            "kind": "party_invite",
            "title": "Invitation",
            "keywords": ["invitation"],
            "slots": [
                {"name": "event_date", "type": "date", "question": "When?"},
                {"name": "venue", "type": "place", "question": "Where?", "cues": ["at"]},
                {"name": "guests", "type": "number", "question": "How many?", "units": ["guests"]},
            ],
        }
    )

    situation = build_situation(
        request="I need an invitation, on 2026-05-09, for 20 guests.",
        template=invitation,
        document="# Invitation\n\nScope: Gamla Stan hall.\n",
        today=TODAY,
    )

    venue = situation.slot("venue")
    assert venue is not None
    assert (venue.value, venue.source) == ("Gamla Stan hall", "document")


def test_the_one_item_of_a_terse_list_no_other_slot_reads_is_the_open_free_text_value():
    incident = parse_template(
        {
            "kind": "outage_report",
            "title": "Outage report",
            "keywords": ["outage"],
            "slots": [
                {"name": "incident_date", "type": "date", "question": "When?"},
                {"name": "service", "type": "text", "question": "Which service?"},
                {"name": "severity", "type": "choice", "choices": ["SEV1", "SEV2"]},
                {"name": "duration_minutes", "type": "number", "units": ["minutes"]},
            ],
        }
    )

    def service(request: str) -> str | None:
        state = build_situation(request=request, template=incident, today=TODAY).slot("service")
        return state.value if state is not None and state.answered else None

    assert service(
        "Outage report please: Überweisungs-API, 8 March, SEV1, down twelve minutes."
    ) == ("Überweisungs-API")
    # two items left over: nothing to choose from
    assert service("Outage report: Zahlungs-API, Kafka, 8 March 2026, SEV1.") is None
    # not a list after a colon
    assert service("Outage report for 8 March 2026, SEV1, twelve minutes.") is None


def test_an_amount_with_a_thousands_comma_is_one_item_of_a_terse_list():
    jobs = parse_template(
        {
            "kind": "job_advert",
            "title": "Job advert",
            "keywords": ["job"],
            "slots": [
                {"name": "role", "type": "text", "question": "Which role?", "cues": ["for a"]},
                {"name": "location", "type": "place", "question": "Where?", "cues": ["in"]},
                {"name": "salary", "type": "money", "question": "Pay?", "aliases": ["pay"]},
            ],
        }
    )

    situation = build_situation(
        request="Write a job posting: for a site reliability engineer; paying CHF 1,500.",
        template=jobs,
        today=TODAY,
    )

    location = situation.slot("location")
    assert location is None or not location.answered
