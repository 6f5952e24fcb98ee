from __future__ import annotations

from datetime import date

import pytest

from agents.evaluation.scenario import Episode, Preference, Task, User
from agents.evaluation.users import AgentOutput, AskedQuestion, LLMUser, ScriptedUser

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
