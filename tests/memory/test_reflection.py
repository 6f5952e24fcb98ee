from __future__ import annotations

import json
from datetime import timedelta

from django.utils import timezone
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from agents import llm
from agents.memory import jobs, reflection, services
from agents.memory.models import MemoryCandidate, MemoryItem, ReflectionState
from agents.memory.reflection import reflect_conversation
from agents.models import ModelProfile, Provider
from agents.services import agents as agent_services
from collab.tasks.models import Message
from collab.tasks.services import post_message
from tests.factories import membership_of

LATER = timezone.now() + timedelta(hours=1)


def say(workspace, user, task, body):
    return post_message(membership=membership_of(workspace, user), task=task, body=body).message


def model_answering(*memories):
    return FakeListChatModel(responses=[json.dumps({"memories": list(memories)})])


def test_reflection_remembers_what_the_model_and_the_rules_find(workspace, alice, task):
    tone = say(workspace, alice, task, "For client work I keep a formal register, always.")
    say(workspace, alice, task, "Also I prefer bullet points in drafts.")
    model = model_answering(
        {
            "person": "alice",
            "message_id": tone.pk,
            "text": "Uses a formal register for client work",
            "key": "tone",
            "value": "formal",
            "confidence": 0.8,
        }
    )

    result = reflect_conversation(task_id=task.pk, chat_model=model, now=LATER)

    assert result.outcome == "reflected"
    remembered = {(i.key, i.value): i for i in MemoryItem.objects.filter(owner=alice)}
    assert set(remembered) == {("tone", "formal"), ("list_style", "bullets")}
    assert remembered["tone", "formal"].source_message_id == tone.pk
    assert remembered["tone", "formal"].source_kind == "reflection"


def test_reflection_is_idempotent(workspace, alice, task):
    say(workspace, alice, task, "I prefer bullet points.")

    first = reflect_conversation(task_id=task.pk, now=LATER)
    second = jobs.reflect_conversation_job(task.pk)  # a redelivered job

    assert first.outcome == "reflected"
    assert second == "up to date"
    assert MemoryItem.objects.get(owner=alice).times_confirmed == 1
    assert ReflectionState.objects.get(task_id=task.pk).last_message_id > 0


def test_reflection_waits_for_the_conversation_to_go_quiet(workspace, alice, task):
    say(workspace, alice, task, "I prefer bullet points.")

    assert reflect_conversation(task_id=task.pk).outcome == "not quiet"
    assert not MemoryItem.objects.exists()


def test_a_done_task_is_reflected_on_at_once(workspace, alice, task):
    say(workspace, alice, task, "I prefer bullet points.")
    task.status = "done"
    task.save()

    assert reflect_conversation(task_id=task.pk).outcome == "reflected"


def test_the_model_cannot_put_words_in_someone_elses_mouth(workspace, alice, bob, task):
    alices = say(workspace, alice, task, "Bob loves numbered lists, I think.")
    model = model_answering(
        {"person": "bob", "message_id": alices.pk, "text": "Loves numbered lists"},
        {"person": "alice", "message_id": 99999, "text": "Made up"},
    )

    reflect_conversation(task_id=task.pk, chat_model=model, now=LATER)

    assert not MemoryItem.objects.exists()


def test_nothing_is_extracted_from_people_with_memory_off(workspace, alice, bob, task):
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )
    say(workspace, alice, task, "I prefer bullet points.")
    say(workspace, bob, task, "Please use British spelling from now on.")
    model = FakeListChatModel(responses=['{"memories": []}'])
    seen = []
    original = model.invoke

    def spy(prompt, *args, **kwargs):
        seen.append(prompt[-1].content)
        return original(prompt, *args, **kwargs)

    object.__setattr__(model, "invoke", spy)

    reflect_conversation(task_id=task.pk, chat_model=model, now=LATER)

    assert list(MemoryItem.objects.values_list("owner__username", "key")) == [("bob", "spelling")]
    assert "bullet" not in seen[0]
    assert "British" in seen[0]


def test_review_first_sends_reflections_to_the_inbox(workspace, alice, task):
    services.update_settings(
        user=alice, enabled=True, review_mode="review", admin_access_allowed=False
    )
    say(workspace, alice, task, "I prefer bullet points.")

    reflect_conversation(task_id=task.pk, now=LATER)

    assert not MemoryItem.objects.exists()
    assert MemoryCandidate.objects.get(owner=alice).key == "list_style"


def test_a_garbled_model_answer_is_ignored_not_fatal(workspace, alice, task):
    say(workspace, alice, task, "hello there")
    model = FakeListChatModel(responses=["I think alice likes cake {not json"])

    assert reflect_conversation(task_id=task.pk, chat_model=model, now=LATER).outcome == "reflected"
    assert not MemoryItem.objects.exists()


def test_agent_messages_are_never_remembered_as_preferences(workspace, alice, task):
    Message.objects.create(
        task=task, kind=Message.Kind.AGENT, author_name="writer", body="I prefer bullet points."
    )

    reflect_conversation(task_id=task.pk, now=LATER)

    assert not MemoryItem.objects.exists()


def test_in_production_reflection_asks_the_tasks_agent_model_when_it_is_a_configured_one(
    workspace, alice, task, monkeypatch
):

    hosted = ModelProfile.objects.create(
        name="hosted", provider=Provider.OPENAI, model="some-model", base_url="http://127.0.0.1:9"
    )
    agent = agent_services.create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=hosted
    )
    agent.tasks.add(task)
    said = say(workspace, alice, task, "For client work I keep a formal register, always.")
    built = []

    def build_chat_model(profile, **kwargs):
        built.append((profile.name, kwargs.get("schema")))
        return model_answering(
            {
                "person": "alice",
                "message_id": said.pk,
                "text": "Formal with clients",
                "key": "tone",
                "value": "formal",
            }
        )

    monkeypatch.setattr(llm, "build_chat_model", build_chat_model)

    reflect_conversation(task_id=task.pk, now=LATER)  # no model passed: the production path

    assert built == [("hosted", reflection.Extraction)]
    item = MemoryItem.objects.get(owner=alice, key="tone")
    assert (item.value, item.scope, item.workspace) == ("formal", "workspace", workspace)


def test_the_embedded_model_and_the_fakes_leave_reflection_to_the_rules(workspace, alice, task):

    fake = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    agent = agent_services.create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=fake
    )
    agent.tasks.add(task)
    assert reflection.default_chat_model(task) is None
    agent.model_profile = None  # the site default: the embedded model
    agent.save()
    assert reflection.default_chat_model(task) is None
