"""The default install's writer and reviewer (issue 30): a person asks the writer for a draft
and a review; the writer drafts with its skills and hands over; the reviewer says what is
missing. Turns run through the engine as the worker would; no model is called."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.chains.hops import delegated_names
from agents.defaults import create_default_agent
from agents.engine import runner
from agents.models import Action, Agent, Hop, ModelCall, Suggestion, Trigger, Turn
from agents.services import suggestions as suggestion_services
from agents.skills.draft_review import HEADING
from collab.lib.errors import Conflict
from collab.tasks import documents
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
    # the draft is proposed before the reply that hands it over (that reply starts the hop)
    kinds = list(
        Action.objects.filter(turn=writer_turn).order_by("index").values_list("kind", flat=True)
    )
    assert kinds == ["suggest", "reply"]
    hop = Hop.objects.get()
    assert (hop.kind, hop.to_agent) == ("review", reviewer)
    assert "@Reviewer please check this draft" in hop.text
    answer = Message.objects.filter(author_name="Reviewer", kind=Message.Kind.AGENT).get()
    assert "?" in answer.body  # the open values, asked about
    assert not ModelCall.objects.exists()


GOAL = "Offsite for 12 people in Lisbon on 3 March 2027, budget 5000 EUR"


def _pair(workspace: Workspace, alice: User, task: Task) -> tuple[Agent, Agent]:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    reviewer = create_default_agent(workspace=workspace, owner=alice, name="Reviewer")
    writer.tasks.add(task)
    reviewer.tasks.add(task)
    task.goal = GOAL
    task.save(update_fields=["goal"])
    return writer, reviewer


def _ask_for_draft_and_review(workspace: Workspace, bob: User, task: Task) -> None:
    task_services.post_message(
        membership=factories.membership_of(workspace, bob),
        task=task,
        body="@Writer draft the plan and ask @Reviewer to check it",
    )


def test_the_reviewer_checks_the_writers_unaccepted_draft_not_the_empty_document(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    writer, reviewer = _pair(workspace, alice, task)

    _ask_for_draft_and_review(workspace, bob, task)
    assert run_queued() == ["Writer", "Reviewer"]

    draft = Suggestion.objects.get(agent=writer)
    assert draft.status == Suggestion.Status.PROPOSED
    assert documents.read_document(task=task).text == ""  # nobody accepted it yet
    reviewer_turn = Turn.objects.get(agent=reviewer)
    assert reviewer_turn.context["draft_review"]["suggestion_id"] == draft.pk
    answer = Message.objects.get(author_name="Reviewer", kind=Message.Kind.AGENT)
    assert "Writer's draft (its suggestion, not accepted yet)" in answer.body
    assert "@Writer" not in answer.body  # no hop back
    # the draft states the budget and the date: read against the empty document they would
    # be reported missing
    review = Suggestion.objects.get(agent=reviewer)
    for stated in ("5,000", "3 March 2027", "Lisbon"):
        assert stated in draft.replace
        assert stated not in review.replace
        assert stated not in answer.body
    assert not ModelCall.objects.exists()


def test_the_reviewer_suggests_what_the_draft_lacks_and_accepting_it_applies_it_once(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    writer, reviewer = _pair(workspace, alice, task)
    bobs = factories.membership_of(workspace, bob)
    _ask_for_draft_and_review(workspace, bob, task)
    run_queued()

    review = Suggestion.objects.get(agent=reviewer)
    assert (review.turn, review.status, review.find) == (
        Turn.objects.get(agent=reviewer),
        Suggestion.Status.PROPOSED,
        "",
    )
    assert HEADING in review.replace
    assert "- [ ] " in review.replace  # the kind's checklist steps the draft does not cover

    suggestion_services.accept_suggestion(
        membership=bobs, suggestion=Suggestion.objects.get(agent=writer)
    )
    suggestion_services.accept_suggestion(membership=bobs, suggestion=review)
    with pytest.raises(Conflict):
        suggestion_services.accept_suggestion(membership=bobs, suggestion=review)

    text = documents.read_document(task=task).text
    assert text.count(HEADING) == 1
    assert text.index("Budget: 5,000 EUR") < text.index(HEADING)  # after the draft
    review.refresh_from_db()
    assert review.status == Suggestion.Status.ACCEPTED


def test_the_reviewer_checks_the_document_once_the_draft_is_accepted(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    run_queued: Callable[[], list[str]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    writer, reviewer = _pair(workspace, alice, task)
    bobs = factories.membership_of(workspace, bob)
    _ask_for_draft_and_review(workspace, bob, task)
    writer_turn = Turn.objects.get(agent=writer)
    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=writer_turn.pk)
    suggestion_services.accept_suggestion(
        membership=bobs, suggestion=Suggestion.objects.get(agent=writer)
    )

    assert run_queued() == ["Reviewer"]
    reviewer_turn = Turn.objects.get(agent=reviewer)
    assert reviewer_turn.context["draft_review"]["suggestion_id"] is None
    answer = Message.objects.get(author_name="Reviewer", kind=Message.Kind.AGENT)
    assert "not accepted yet" not in answer.body
    assert "5,000" not in Suggestion.objects.get(agent=reviewer).replace
