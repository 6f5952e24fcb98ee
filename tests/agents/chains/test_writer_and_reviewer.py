"""The default install's writer and reviewer (issue 30): a person asks the writer for a draft
and a review; the writer drafts with its skills and hands over; the reviewer says what is
missing. Turns run through the engine as the worker would; no model is called."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User

from agents.chains.hops import delegated_names
from agents.defaults import create_default_agent
from agents.models import Hop, ModelCall, Suggestion, Trigger, Turn
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories


def test_a_name_after_ask_is_handed_over_to_not_addressed():
    assert delegated_names("@Writer draft it and ask @Reviewer to check it") == {
        "reviewer": "Reviewer"
    }
    assert delegated_names("@Writer draft it, then hand it over to @Rev") == {"rev": "Rev"}
    assert delegated_names("ask @Reviewer to check it") == {}  # the first name is addressed
    assert delegated_names("@Writer and @Reviewer, draft it") == {}


def test_the_writer_drafts_and_hands_over_and_the_reviewer_says_what_is_missing(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    reviewer = create_default_agent(workspace=workspace, owner=alice, name="Reviewer")
    writer.tasks.add(task)
    reviewer.tasks.add(task)

    task_services.post_message(
        membership=factories.membership_of(workspace, bob),
        task=task,
        body="@Writer draft the plan and ask @Reviewer to check it",
    )
    ran = run_queued()

    assert ran == ["Writer", "Reviewer"]  # the reviewer only once, after the draft
    writer_turn = Turn.objects.get(agent=writer)
    reviewer_turn = Turn.objects.get(agent=reviewer)
    assert (reviewer_turn.trigger, reviewer_turn.parent) == (Trigger.AGENT, writer_turn)
    assert Suggestion.objects.filter(turn=writer_turn).exists()  # the draft, to accept
    hop = Hop.objects.get()
    assert (hop.kind, hop.to_agent) == ("review", reviewer)
    assert "@Reviewer please check this draft" in hop.text
    answer = Message.objects.filter(author_name="Reviewer", kind=Message.Kind.AGENT).get()
    assert "?" in answer.body  # the open values, asked about
    assert not ModelCall.objects.exists()
