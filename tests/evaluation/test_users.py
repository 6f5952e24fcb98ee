from __future__ import annotations

from datetime import date

import pytest

from agents.evaluation.scenario import Episode, Preference, Task, User
from agents.evaluation.users import (
    AgentOutput,
    AskedQuestion,
    LLMUser,
    ScriptedUser,
    feedback_for,
)

TODAY = date(2027, 3, 1)
BRITISH = Preference(
    id="ana-british",
    key="spelling",
    text="I write British English.",
    check={"type": "spelling_variant", "variant": "british"},
)
ANA = User(id="ana", name="Ana", persona="PM", preferences=(BRITISH,), patience=3)
EPISODE = Episode(
    id="ana-trip",
    user="ana",
    session=1,
    task=Task(title="Trip", template="travel_plan"),
    request="Plan a trip to Porto for three people.",
    slots={"destination": "Porto", "travelers": "3", "budget": "€1,500"},
    stated={"destination": "Porto", "travelers": "three people"},
    needs_clarification=True,
    clarification_slots=("budget",),
    success=({"type": "regex", "pattern": "1,?500", "slot": "budget"},),
)


@pytest.fixture
def person() -> ScriptedUser:
    return ScriptedUser(user=ANA, episode=EPISODE, preferences=[BRITISH], today=TODAY)


def ask(*questions: AskedQuestion) -> AgentOutput:
    return AgentOutput(action="ask", questions=questions)


def test_answers_only_the_tagged_slot(person: ScriptedUser) -> None:
    reply = person.respond(ask(AskedQuestion("What is the total budget?", ("budget",))))
    assert reply.answers == {"budget": "€1,500"}
    assert reply.asked_slots == ("budget",)
    assert (reply.redundant, reply.irrelevant) == (0, 0)


def test_untagged_question_is_matched_by_slot_aliases(person: ScriptedUser) -> None:
    reply = person.respond(ask(AskedQuestion("How much can you spend?")))
    assert reply.answers == {"budget": "€1,500"}


def test_question_about_a_stated_slot_is_marked_redundant(person: ScriptedUser) -> None:
    reply = person.respond(ask(AskedQuestion("Where to?", ("destination",))))
    assert reply.redundant == 1
    assert reply.answers == {}
    assert "already said" in reply.text


def test_question_the_person_has_no_view_on_is_irrelevant(person: ScriptedUser) -> None:
    reply = person.respond(
        ask(AskedQuestion("What pace?", ("pace",)), AskedQuestion("Anything else?"))
    )
    assert reply.irrelevant == 2
    assert reply.answers == {}


def test_correct_suggestion_is_accepted_and_a_wrong_one_is_corrected(person) -> None:
    right = AgentOutput(action="suggest", document="Budget: EUR 1500, colour")
    wrong = AgentOutput(action="suggest", document="Budget: EUR 900")
    reply = person.respond(right)
    assert (reply.kind, reply.accepted) == ("done", True)
    reply = person.respond(wrong)
    assert (reply.kind, reply.accepted) == ("reject", False)
    assert reply.answers == {"budget": "€1,500"}
    assert reply.wrong_slots == ("budget",)


def test_violated_preference_is_enforced_by_restating_it(person: ScriptedUser) -> None:
    reply = person.respond(AgentOutput(action="act", document="Budget: 1,500. Pick a color."))
    assert reply.kind == "enforce"
    assert reply.enforced == ("ana-british",)
    assert "British English" in reply.text


def test_a_correct_document_ends_the_episode(person: ScriptedUser) -> None:
    reply = person.respond(AgentOutput(action="act", document="Budget: 1,500. Pick a colour."))
    assert reply.kind == "done"
    assert reply.ends_episode


def test_gives_up_after_its_patience(person: ScriptedUser) -> None:
    wrong = AgentOutput(action="act", document="Budget: 10")
    kinds = [person.respond(wrong).kind for _ in range(4)]
    assert kinds == ["correct", "correct", "correct", "give_up"]


def test_a_question_about_a_real_blocker_gets_a_thumbs_up(person: ScriptedUser) -> None:
    question = ask(AskedQuestion("What is the total budget?", ("budget",)))
    assert feedback_for(person.respond(question), question) == "up"


@pytest.mark.parametrize(
    "question",
    [
        AskedQuestion("Where to?", ("destination",)),  # redundant
        AskedQuestion("What pace?", ("pace",)),  # irrelevant
        AskedQuestion("Budget and destination?", ("budget", "destination")),  # partly redundant
    ],
)
def test_a_redundant_or_irrelevant_question_was_unnecessary(person, question) -> None:
    output = ask(question)
    assert feedback_for(person.respond(output), output) == "unnecessary_question"


def test_an_accepted_suggestion_gets_a_thumbs_up_and_a_rejected_one_a_thumbs_down(person) -> None:
    right = AgentOutput(action="suggest", document="Budget: EUR 1500, colour")
    wrong = AgentOutput(action="suggest", document="Budget: EUR 900")
    assert feedback_for(person.respond(right), right) == "up"
    assert feedback_for(person.respond(wrong), wrong) == "down"


def test_a_right_edit_gets_a_thumbs_up_even_when_a_preference_is_restated(person) -> None:
    enforced = AgentOutput(action="act", document="Budget: 1,500. Pick a color.")
    assert feedback_for(person.respond(enforced), enforced) == "up"
    corrected = AgentOutput(action="act", document="Budget: 10")
    assert feedback_for(person.respond(corrected), corrected) == "down"


def test_a_reply_that_did_nothing_and_a_give_up_get_a_thumbs_down(person) -> None:
    talk = AgentOutput(action="reply", text="Sure, I can help.")
    assert feedback_for(person.respond(talk), talk) == "down"
    enforced = AgentOutput(action="act", document="Budget: 1,500. Pick a color.")  # else up
    for _ in range(2):
        person.respond(talk)
    reply = person.respond(enforced)
    assert reply.kind == "give_up"
    assert feedback_for(reply, enforced) == "down"


class _Echo:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def invoke(self, prompt: str):
        from langchain_core.messages import AIMessage

        self.prompts.append(prompt)
        return AIMessage(content="Oh, about €1,500 in total.")


def test_llm_user_keeps_the_scripted_decision_and_rewords_it() -> None:
    model = _Echo()
    person = LLMUser(
        chat_model=model, user=ANA, episode=EPISODE, preferences=[BRITISH], today=TODAY
    )
    reply = person.respond(ask(AskedQuestion("What is the total budget?", ("budget",))))
    assert reply.answers == {"budget": "€1,500"}
    assert reply.text == "Oh, about €1,500 in total."
    assert "PM" in model.prompts[0]


def test_the_person_does_not_restate_a_style_wish_because_of_their_own_notes_kept() -> None:
    # given ana's own notes in American spelling, kept as the task asks
    notes = "- Pick a color for the badges\n"
    episode = Episode(
        **{**EPISODE.__dict__, "task": Task(**{**EPISODE.task.__dict__, "document": notes})}
    )
    person = ScriptedUser(user=ANA, episode=episode, preferences=[BRITISH], today=TODAY)
    # when the agent keeps them and writes its own lines in British spelling: she is satisfied
    kept = person.respond(
        AgentOutput(action="act", document=notes + "Budget: 1,500. The colour.\n")
    )
    assert kept.kind == "done"
    # but an agent that writes American spelling itself is told again
    person = ScriptedUser(user=ANA, episode=episode, preferences=[BRITISH], today=TODAY)
    own = person.respond(AgentOutput(action="act", document=notes + "Budget: 1,500. The color.\n"))
    assert own.kind == "enforce"
    assert own.enforced == ("ana-british",)
