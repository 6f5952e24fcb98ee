from __future__ import annotations

import pytest
from django.urls import reverse

from agents.memory import jobs, services
from agents.memory.embeddings import EMBED_JOB
from agents.memory.extractors import parse_command
from agents.memory.models import MemoryCandidate, MemoryItem, Scope, Status
from agents.memory.services.commands import REFLECT_JOB
from collab.tasks.services import post_message, set_task_status
from tests.factories import membership_of


def post(workspace, user, task, body):
    return post_message(membership=membership_of(workspace, user), task=task, body=body)


def say(workspace, user, task, body):
    return post(workspace, user, task, body).message


def test_remember_that_in_chat_is_remembered_at_once_with_the_message_as_provenance(
    workspace, alice, task
):
    message = say(workspace, alice, task, "Remember that I prefer bullet points.")

    item = MemoryItem.objects.get(owner=alice)
    assert (item.key, item.value, item.scope) == ("list_style", "bullets", Scope.PERSONAL)
    assert item.text == "I prefer bullet points"
    assert (item.source_kind, item.source_message_id, item.source_task_id) == (
        "chat_command",
        message.pk,
        task.pk,
    )


def test_forget_in_chat_ends_the_matching_memory(workspace, alice, task):
    say(workspace, alice, task, "@writer please remember: use British spelling")

    say(workspace, alice, task, "forget that I want British spelling")

    item = MemoryItem.objects.get(owner=alice)
    assert item.status == Status.DELETED
    assert item.valid_to is not None


def test_remember_for_the_team_is_shared_by_the_workspace(workspace, bob, task):
    say(workspace, bob, task, "remember for the team that we write in a formal tone")

    item = MemoryItem.objects.get()
    assert (item.scope, item.workspace, item.owner) == (Scope.TEAM, workspace, bob)
    assert (item.key, item.value) == ("tone", "formal")


def test_ordinary_messages_and_reminders_are_not_commands(workspace, alice, task):
    say(workspace, alice, task, "Can you remember the budget from last week?")
    say(workspace, alice, task, "remember to invite Sam")
    say(workspace, alice, task, "forget everything")

    assert not MemoryItem.objects.exists()


def test_commands_are_ignored_when_memory_is_off(workspace, alice, task):
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )

    say(workspace, alice, task, "remember that I prefer bullet points")

    assert not MemoryItem.objects.exists()


def _notice(posted) -> str:
    return posted.memory_notice


def test_the_person_who_gave_a_command_is_told_what_it_did(workspace, alice, bob, task):
    assert _notice(post(workspace, alice, task, "remember that I prefer bullet points")) == (
        "Remembered for you, everywhere: “I prefer bullet points”."
    )
    assert _notice(post(workspace, alice, task, "remember that I prefer bullet points")) == (
        "Already remembered for you, everywhere: “I prefer bullet points”."
    )
    assert _notice(post(workspace, bob, task, "remember for the team that we are formal")) == (
        "Remembered in the team's memory: “We are formal”."
    )
    assert _notice(post(workspace, alice, task, "forget bullet points")) == (
        "Forgot 1 remembered item."
    )
    assert _notice(post(workspace, alice, task, "forget the colour of the sky")) == (
        "Nothing remembered matched that, so nothing was forgotten."
    )
    assert _notice(post(workspace, alice, task, "hello")) == ""
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )
    assert _notice(post(workspace, alice, task, "remember that I like tea")).startswith(
        "Nothing was remembered: memory is off for you"
    )


@pytest.mark.parametrize("htmx", [True, False])
def test_the_chat_form_shows_the_notice_to_its_author_only(as_user, alice, task, htmx):
    """The answer to the form (htmx), or the page after the redirect (no JavaScript), carries
    the notice; the chat message everyone sees is the person's own words."""
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    client = as_user(alice)

    response = client.post(
        reverse("tasks:post_message", args=[task.pk]),
        {"body": "remember that I prefer bullet points"},
        follow=not htmx,
        **headers,
    )

    text = "Remembered for you, everywhere: “I prefer bullet points”."
    assert response.status_code == 200
    assert text in response.content.decode()
    if htmx:
        assert 'id="chat-notice" role="status" hx-swap-oob="true"' in response.content.decode()
    plain = client.post(reverse("tasks:post_message", args=[task.pk]), {"body": "hello"}, **headers)
    assert "Remembered" not in plain.content.decode()


def test_every_chat_message_schedules_a_debounced_reflection_on_commit(
    workspace, alice, task, sent_jobs, django_capture_on_commit_callbacks, settings
):
    settings.MEMORY_REFLECTION_QUIET_SECONDS = 90
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        say(workspace, alice, task, "hello")
        say(workspace, alice, task, "anyone?")
    assert not [job for job in sent_jobs if job[0] == REFLECT_JOB]  # nothing before the commit

    for callback in callbacks:
        callback()

    reflections = [job for job in sent_jobs if job[0] == REFLECT_JOB]
    assert reflections == [(REFLECT_JOB, (task.pk,), 90), (REFLECT_JOB, (task.pk,), 90)]


def test_finishing_a_task_reflects_without_waiting(
    workspace, alice, task, sent_jobs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        set_task_status(membership=membership_of(workspace, alice), task=task, status="done")

    assert [job for job in sent_jobs if job[0] == REFLECT_JOB] == [(REFLECT_JOB, (task.pk,), 0)]


def test_memory_jobs_are_registered_under_the_names_services_send():
    from collab.celery import app

    assert app.tasks[REFLECT_JOB].run == jobs.reflect_conversation_job.run
    assert app.tasks[EMBED_JOB].run == jobs.embed_items_job.run


def test_command_parser_reads_scopes_and_structure():
    command = parse_command("@helper remember in this workspace that answers stay under 150 words")

    assert command is not None
    assert command.scope == "workspace"
    assert (command.proposal.key, command.proposal.value) == ("length", "short")
    assert parse_command("remembering is hard") is None


def test_a_command_about_another_member_only_waits_in_their_inbox(workspace, alice, bob, task):
    bob.first_name = "Zoë"
    bob.save()

    posted = post(workspace, alice, task, "remember that Zoë prefers American spelling")

    assert not MemoryItem.objects.exists()
    candidate = MemoryCandidate.objects.get()
    assert (candidate.owner, candidate.key, candidate.value) == (bob, "spelling", "american")
    assert (candidate.scope, candidate.workspace) == (Scope.WORKSPACE, workspace)
    assert candidate.source_person_id == alice.pk
    assert "waits for them" in posted.memory_notice


def test_a_command_about_oneself_or_a_non_member_stays_the_authors(workspace, alice, task):
    say(workspace, alice, task, "remember that I prefer British spelling")
    say(workspace, alice, task, "remember that Łukasz is the venue contact")

    assert set(MemoryItem.objects.values_list("owner__username", "text")) == {
        ("alice", "I prefer British spelling"),
        ("alice", "Łukasz is the venue contact"),
    }
    assert not MemoryCandidate.objects.exists()


def test_a_preference_told_to_an_agent_is_kept_at_once_one_item_per_preference(
    workspace, alice, task
):
    result = post(workspace, alice, task, "@Assistant I prefer bullet points and British spelling")

    items = {(i.key, i.value): i for i in MemoryItem.objects.filter(owner=alice)}
    assert set(items) == {("list_style", "bullets"), ("spelling", "british")}
    assert items[("spelling", "british")].text == "I prefer British spelling"
    assert items[("list_style", "bullets")].source_message_id == result.message.pk
    assert "Remembered for you, everywhere" in result.memory_notice


def test_an_order_a_question_or_a_message_to_nobody_keeps_no_preference(workspace, alice, task):
    say(workspace, alice, task, "@Assistant bullet the key points")
    say(workspace, alice, task, "@Assistant do you prefer bullet points?")
    say(workspace, alice, task, "I prefer bullet points")  # to the room: reflection reads it

    assert not MemoryItem.objects.filter(owner=alice).exists()


def test_a_preference_told_with_memory_switched_off_is_not_kept(workspace, alice, task):
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )

    say(workspace, alice, task, "@Assistant I prefer bullet points")

    assert not MemoryItem.objects.filter(owner=alice).exists()
