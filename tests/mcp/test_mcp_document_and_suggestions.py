"""Editing the document, proposing and deciding suggestions over MCP, with the SDK's own client
(streamable HTTP at /mcp of a Daphne server, and stdio): through the same services as the API
and the pages, with the token owner's role exactly, every call audited."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from agents.models import Suggestion
from collab.audit.models import AuditEvent
from collab.tasks import documents
from collab.tasks.models import Task
from tests.api.conftest import token_for
from tests.browser.conftest import LiveServer
from tests.mcp.test_mcp_server import call_over_http
from tests.processes import live_env

pytestmark = pytest.mark.django_db(transaction=True)


def _write(task: Task, text: str, who: str = "setup") -> None:
    documents.apply_text_edit(task=task, new_text=text, author_label=who)


def test_an_editor_edits_the_version_read_and_what_others_wrote_since_stays(
    mcp_server: LiveServer, bob: Any, task: Task
) -> None:
    _write(task, "Dates: TBD\nVenue: TBD\n")
    (read,) = call_over_http(mcp_server, token_for(bob), ("read_document", {"task_id": task.pk}))
    _write(task, "Dates: May 12\nVenue: TBD\n", who="alice")  # someone else, meanwhile

    (edited,) = call_over_http(
        mcp_server,
        token_for(bob),
        (
            "edit_document",
            {
                "task_id": task.pk,
                "text": "Dates: TBD\nVenue: 山 lodge 🏔️\n",
                "base_version": read.structured_content["version"],
            },
        ),
    )

    assert not edited.is_error
    assert documents.read_document(task=task).text == "Dates: May 12\nVenue: 山 lodge 🏔️\n"
    assert edited.structured_content["text"] == "Dates: May 12\nVenue: 山 lodge 🏔️\n"
    actions = set(AuditEvent.objects.filter(actor=bob).values_list("action", flat=True))
    assert {"mcp.read_document", "mcp.edit_document"} <= actions


def test_an_edit_of_a_version_that_can_no_longer_be_merged_is_a_clear_conflict(
    mcp_server: LiveServer, bob: Any, task: Task
) -> None:
    _write(task, "one\n")
    old = documents.read_document(task=task).update_id
    _write(task, "one\ntwo\n")
    documents.compact_document(document_id=task.document.pk)

    (edited,) = call_over_http(
        mcp_server,
        token_for(bob),
        ("edit_document", {"task_id": task.pk, "text": "uno\n", "base_version": old}),
    )

    assert edited.is_error
    assert "Conflict: " in edited.content[0].text
    assert "can no longer be merged" in edited.content[0].text
    assert documents.read_document(task=task).text == "one\ntwo\n"


def test_a_viewer_reads_the_document_but_cannot_edit_propose_or_decide(
    mcp_server: LiveServer, carol: Any, task: Task
) -> None:
    _write(task, "Venue: TBD\n")
    version = documents.read_document(task=task).update_id

    read, edited, proposed = call_over_http(
        mcp_server,
        token_for(carol),
        ("read_document", {"task_id": task.pk}),
        ("edit_document", {"task_id": task.pk, "text": "Venue: barn\n", "base_version": version}),
        ("propose_suggestion", {"task_id": task.pk, "find": "TBD", "replace": "barn"}),
    )

    assert read.structured_content["text"] == "Venue: TBD\n"
    assert edited.is_error
    assert "cannot edit this document" in edited.content[0].text
    assert proposed.is_error
    assert "cannot propose" in proposed.content[0].text
    assert documents.read_document(task=task).text == "Venue: TBD\n"
    assert not Suggestion.objects.filter(task=task).exists()


def test_an_outsider_finds_no_document_and_no_suggestion(
    mcp_server: LiveServer, mallory: Any, alice: Any, task: Task
) -> None:
    _write(task, "Secret venue\n")
    version = documents.read_document(task=task).update_id
    from agents.services.suggestions import propose_suggestion
    from collab.workspaces.selectors import get_membership

    suggestion = propose_suggestion(
        membership=get_membership(alice, task.workspace_id), task=task, find="", replace="x"
    )

    read, edited, rejected = call_over_http(
        mcp_server,
        token_for(mallory),
        ("read_document", {"task_id": task.pk}),
        ("edit_document", {"task_id": task.pk, "text": "mine\n", "base_version": version}),
        ("reject_suggestion", {"task_id": task.pk, "suggestion_id": suggestion.pk}),
    )

    for result in (read, edited, rejected):
        assert result.is_error
        assert result.content[0].text.endswith(f"No task {task.pk} that you can see.")
    assert documents.read_document(task=task).text == "Secret venue\n"
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.Status.PROPOSED


def test_a_proposed_suggestion_is_accepted_by_another_editor(
    mcp_server: LiveServer, bob: Any, alice: Any, task: Task
) -> None:
    _write(task, "Venue: TBD\n")

    (proposed,) = call_over_http(
        mcp_server,
        token_for(bob),
        (
            "propose_suggestion",
            {"task_id": task.pk, "find": "TBD", "replace": "the <barn>", "rationale": "Cheaper"},
        ),
    )
    listed, accepted, again = call_over_http(
        mcp_server,
        token_for(alice),
        ("list_suggestions", {"task_id": task.pk}),
        (
            "accept_suggestion",
            {"task_id": task.pk, "suggestion_id": proposed.structured_content["id"]},
        ),
        (
            "reject_suggestion",
            {"task_id": task.pk, "suggestion_id": proposed.structured_content["id"]},
        ),
    )

    assert not proposed.is_error
    assert proposed.structured_content["by"] == "bob"
    assert [s["replace"] for s in listed.structured_content["result"]] == ["the <barn>"]
    assert accepted.structured_content["status"] == "accepted"
    assert documents.read_document(task=task).text == "Venue: the <barn>\n"
    assert again.is_error
    assert again.content[0].text.endswith("Conflict: This suggestion has already been decided.")
    stored = Suggestion.objects.get(task=task)
    assert (stored.agent_id, stored.proposed_by, stored.decided_by) == (None, bob, alice)
    assert {"mcp.propose_suggestion"} <= set(
        AuditEvent.objects.filter(actor=bob).values_list("action", flat=True)
    )
    assert {"mcp.list_suggestions", "mcp.accept_suggestion"} <= set(
        AuditEvent.objects.filter(actor=alice).values_list("action", flat=True)
    )


def test_a_suggestion_of_text_that_is_not_in_the_document_is_refused(
    mcp_server: LiveServer, bob: Any, task: Task
) -> None:
    _write(task, "Venue: TBD\n")

    (proposed,) = call_over_http(
        mcp_server,
        token_for(bob),
        ("propose_suggestion", {"task_id": task.pk, "find": "Dates", "replace": "May"}),
    )

    assert proposed.is_error
    assert "Conflict: The document does not contain" in proposed.content[0].text
    assert not Suggestion.objects.filter(task=task).exists()


async def _propose_over_stdio(token: str, task_id: int) -> Any:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_server"],
        env=live_env(COLLAB_API_TOKEN=token),
        cwd=str(settings.BASE_DIR),
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await session.call_tool(
            "propose_suggestion", {"task_id": task_id, "find": "", "replace": "\nBring boots."}
        )


def test_a_suggestion_proposed_over_stdio_is_the_token_owners(bob: Any, task: Task) -> None:
    _write(task, "Packing list\n")

    proposed = asyncio.run(_propose_over_stdio(token_for(bob), task.pk))

    assert not proposed.is_error
    stored = Suggestion.objects.get(task=task)
    assert (stored.proposed_by, stored.find, stored.replace) == (bob, "", "\nBring boots.")
    assert "+Bring boots." in stored.diff
