from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils.html import escape

from agents.llm import embedded
from agents.models import Agent, Trigger, Turn, TurnStatus
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.realtime import broadcast
from collab.tasks.models import Message, Task
from collab.tasks.services import post_message
from collab.workspaces.models import Workspace
from tests import factories


@pytest.fixture(autouse=True)
def _no_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_services, "enqueue_turn", lambda turn_id: None)


def test_task_page_lists_its_agents_with_an_ask_button(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))
    assert page.status_code == 200
    assert b'data-testid="ask-Mira"' in page.content


def test_a_task_with_no_agents_says_how_to_get_one(
    as_user: Any,
    alice: User,
    bob: User,
    carol: User,
    task: Task,
    make_agent: Callable[..., Agent],
) -> None:
    def hint(user: User) -> str:
        page = as_user(user).get(reverse("tasks:detail", args=[task.pk]))
        text = page.content.decode()
        start = text.index('data-testid="no-agents">')
        return text[start : text.index("</p>", start)].split(">", 1)[1]

    assert hint(alice).endswith('create one with "Manage agents" below.')
    assert hint(bob).endswith("its owners can create them.")
    assert hint(carol) == "No agents on this task yet."

    make_agent("Mira")

    assert hint(bob).endswith("or add one below.")
    assert hint(carol) == "No agents on this task yet."


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """What goes out on commit, in order: agent events (payload type and both fragments) and
    turn enqueues."""
    seen: list[tuple[str, Any]] = []

    def agent_event(
        task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str
    ) -> None:
        seen.append((payload["type"], (payload, html, html_readonly)))

    monkeypatch.setattr(broadcast, "agent_event", agent_event)
    monkeypatch.setattr(
        turn_services, "enqueue_turn", lambda turn_id: seen.append(("enqueue", turn_id))
    )
    return seen


def test_an_agent_mentioned_on_a_task_it_was_not_on_reaches_open_pages_before_its_turn(
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
    published: list[tuple[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Its card (status, stream, Ask) must be on the page before its turn's events, which the
    page could not show without it; a second mention sends no card again."""
    make_agent("Mira")
    member = factories.membership_of(workspace, bob)

    with django_capture_on_commit_callbacks(execute=True):
        post_message(membership=member, task=task, body="@Mira hello")
    with django_capture_on_commit_callbacks(execute=True):
        post_message(membership=member, task=task, body="@Mira again")

    kinds = [kind for kind, _ in published]
    # the second message joins the turn still queued: no new turn, and no card again
    assert kinds == ["agent.task_agents", "enqueue", "agent.turn"]
    payload, html, html_readonly = published[0][1]
    assert payload["agents"] == ["Mira"]
    assert 'id="agent-cards" hx-swap-oob="true"' in html
    assert 'data-agent="Mira"' in html
    assert 'data-testid="ask-Mira"' in html
    # the editor's list of the task's agents (its presence list) is replaced too
    assert '<div hx-swap-oob="outerHTML:#document-agents"><script id="document-agents"' in html
    assert 'data-agent="Mira"' in html_readonly
    assert "<form" not in html_readonly


def test_adding_and_removing_an_agent_updates_open_pages(
    as_user: Any,
    alice: User,
    task: Task,
    make_agent: Callable[..., Agent],
    published: list[tuple[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    mira = make_agent("Mira")

    with django_capture_on_commit_callbacks(execute=True):
        added = as_user(alice).post(
            reverse("agents:add_to_task", args=[task.pk]),
            {"agent": mira.pk},
            HTTP_HX_REQUEST="true",
        )
    with django_capture_on_commit_callbacks(execute=True):
        agent_services.remove_agent_from_task(
            membership=factories.membership_of(task.workspace, alice), agent=mira, task=task
        )

    assert added.status_code == 200
    # the adder's page may not have its socket open yet: the answer carries the cards too
    assert 'id="agent-cards" hx-swap-oob="true"' in added.content.decode()
    assert 'data-agent="Mira"' in added.content.decode()
    assert [payload["agents"] for _, (payload, _h, _r) in published] == [["Mira"], []]
    assert "or add one below" in published[1][1][1]


def test_a_viewers_page_does_not_look_up_agents_to_add(
    as_user: Any, bob: User, carol: User, task: Task, mira: Agent
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def agent_reads(user: User) -> list[str]:
        client = as_user(user)
        with CaptureQueriesContext(connection) as captured:
            client.get(reverse("tasks:detail", args=[task.pk]))
        return [q["sql"] for q in captured.captured_queries if 'FROM "agents_agent"' in q["sql"]]

    # The editor's cards read the task's agents and the addable ones in one statement; the
    # viewer's read only the task's, never the workspace's other agents.
    editor, viewer = agent_reads(bob), agent_reads(carol)
    workspace_wide = '"agents_agent"."workspace_id" = '
    assert len(editor) == len(viewer)
    assert [sql for sql in editor if workspace_wide in sql] != []
    assert [sql for sql in viewer if workspace_wide in sql] == []


def test_viewer_sees_agents_but_no_buttons(
    as_user: Any, carol: User, task: Task, mira: Agent
) -> None:
    page = as_user(carol).get(reverse("tasks:detail", args=[task.pk]))
    assert b'data-agent="Mira"' in page.content
    assert b"ask-Mira" not in page.content


def test_page_opened_mid_stream_shows_the_text_so_far(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    Turn.objects.filter(pk=turn.pk).update(
        status=TurnStatus.RUNNING, stream_text="Half a thou", model_label="fake"
    )
    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))
    assert b"<p>Half a thou</p>\n</div>" in page.content  # rendered as the chat renders it
    assert b'data-testid="stop-Mira"' in page.content


def test_embedded_model_turns_say_a_stronger_model_can_be_configured(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    Turn.objects.create(
        agent=mira,
        task=task,
        trigger=Trigger.ASK,
        status=TurnStatus.DONE,
        provider="embedded",
        model_label="SmolLM2-135M-Instruct (embedded, small)",
    )
    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))
    assert b"answered by SmolLM2-135M-Instruct (embedded, small)" in page.content
    assert f"answered. {escape(embedded.capabilities())}".encode() in page.content  # measured
    assert b"An administrator can set up a stronger model on the Models page" in page.content


def test_the_panel_names_the_model_only_once_it_answered(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    turn = Turn.objects.create(
        agent=mira,
        task=task,
        trigger=Trigger.ASK,
        status=TurnStatus.RUNNING,
        provider="embedded",
        model_label="SmolLM2-135M-Instruct (small embedded model)",
    )
    running = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))
    turn.status = TurnStatus.DONE
    turn.save()
    done = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))

    assert b"answered by" not in running.content
    assert b"A small model on this server answered" not in running.content
    assert b"answered by SmolLM2-135M-Instruct (small embedded model)" in done.content


def test_editor_asks_an_agent(as_user: Any, bob: User, task: Task, mira: Agent) -> None:
    response = as_user(bob).post(
        reverse("agents:ask", args=[task.pk, mira.pk]),
        {"prompt": "Summarise"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 204
    turn = Turn.objects.get()
    asked = Message.objects.get(task=task)  # the prompt, as bob's chat message
    assert (turn.trigger, turn.inputs, turn.requested_by) == (
        Trigger.ASK,
        {"prompt": "Summarise", "message_ids": [asked.pk]},
        bob,
    )


def test_viewer_cannot_ask_an_agent(as_user: Any, carol: User, task: Task, mira: Agent) -> None:
    response = as_user(carol).post(reverse("agents:ask", args=[task.pk, mira.pk]))
    assert response.status_code == 403
    assert not Turn.objects.exists()


def test_outsider_cannot_find_the_agents(
    as_user: Any, mallory: User, task: Task, mira: Agent
) -> None:
    response = as_user(mallory).post(reverse("agents:ask", args=[task.pk, mira.pk]))
    assert response.status_code == 404


def test_editor_stops_a_turn(as_user: Any, bob: User, task: Task, mira: Agent) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    response = as_user(bob).post(
        reverse("agents:stop", args=[task.pk, turn.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 204
    assert Turn.objects.get().status == TurnStatus.CANCELLED


def test_stop_on_a_turn_that_just_finished_says_so(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.DONE)
    response = as_user(bob).post(
        reverse("agents:stop", args=[task.pk, turn.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert response.content.decode() == "This turn has already finished (done)."
    assert Turn.objects.get().status == TurnStatus.DONE


def test_owner_creates_an_agent(as_user: Any, alice: User, workspace: Workspace) -> None:
    response = as_user(alice).post(
        reverse("agents:manage", args=[workspace.pk]),
        {
            "name": "Scout",
            "colour": "#112233",
            "policy_name": "never",
            "mode": "suggest_only",
            "on_mention": "on",
            "ask_button": "on",
            "is_active": "on",
        },
    )
    assert response.status_code == 302
    agent = Agent.objects.get()
    assert (agent.name, agent.model_profile, agent.on_every_message) == ("Scout", None, False)


def test_agent_names_are_unique_in_a_workspace_whatever_the_case(
    as_user: Any, alice: User, workspace: Workspace, mira: Agent
) -> None:
    response = as_user(alice).post(
        reverse("agents:manage", args=[workspace.pk]),
        {"name": "MIRA", "colour": "#112233", "policy_name": "never", "mode": "suggest_only"},
    )
    assert response.status_code == 400
    assert b"Another agent in this workspace has that name." in response.content


def test_editor_cannot_manage_agents(as_user: Any, bob: User, workspace: Workspace) -> None:
    response = as_user(bob).post(
        reverse("agents:manage", args=[workspace.pk]),
        {"name": "Scout", "colour": "#112233", "policy_name": "never", "mode": "suggest_only"},
    )
    assert response.status_code == 403
    assert not Agent.objects.exists()


def test_the_policy_choices_say_what_each_does_and_what_it_costs(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    from agents.forms import POLICY_WORDS
    from agents.policies import DEFAULT_POLICY

    page = as_user(alice).get(reverse("agents:manage", args=[workspace.pk])).content.decode()

    for words in POLICY_WORDS.values():
        assert words.replace("'", "&#x27;") in page
    assert "(up to 1 more model call a turn)" in page
    assert "(up to 4 more model calls a turn)" in page
    recommended = page.split('class="badge recommended"')[0].rsplit('value="', 1)[1]
    assert recommended.startswith(f'{DEFAULT_POLICY}"')
    assert f'value="{DEFAULT_POLICY}" checked' in page


def test_unknown_policy_is_refused(as_user: Any, alice: User, workspace: Workspace) -> None:
    response = as_user(alice).post(
        reverse("agents:manage", args=[workspace.pk]),
        {"name": "Scout", "colour": "#112233", "policy_name": "sometimes", "mode": "suggest_only"},
    )
    assert response.status_code == 400
    assert not Agent.objects.exists()


def test_person_answers_a_question_card(as_user: Any, bob: User, task: Task, mira: Agent) -> None:
    from agents.models import Question

    turn = Turn.objects.create(
        agent=mira, task=task, trigger=Trigger.ASK, status=TurnStatus.WAITING
    )
    question = Question.objects.create(task=task, agent=mira, turn=turn, text="Which venue?")
    response = as_user(bob).post(
        reverse("agents:answer", args=[task.pk, question.pk]),
        {"answer": "Lyon"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 204
    question.refresh_from_db()
    assert (question.status, question.answer, question.answered_by) == ("answered", "Lyon", bob)


def test_task_page_query_count_does_not_grow_with_cards(
    as_user: Any,
    bob: User,
    task: Task,
    mira: Agent,
    django_assert_max_num_queries: Callable[..., Any],
) -> None:
    from agents.models import AgentNote, Suggestion

    for n in range(5):
        Suggestion.objects.create(task=task, agent=mira, replace=f"line {n}")
        AgentNote.objects.create(task=task, agent=mira, text=f"note {n}")
    client = as_user(bob)
    with django_assert_max_num_queries(25):
        client.get(reverse("tasks:detail", args=[task.pk]))


def test_owner_sets_an_agents_question_timeout(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    response = as_user(alice).post(
        reverse("agents:manage", args=[workspace.pk]),
        {
            "name": "Patient",
            "colour": "#112233",
            "policy_name": "never",
            "mode": "suggest_only",
            "question_timeout_minutes": "0",
        },
    )

    assert response.status_code == 302
    assert Agent.objects.get(name="Patient").question_timeout_minutes == 0


def test_a_negative_question_timeout_is_refused(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    response = as_user(alice).post(
        reverse("agents:manage", args=[workspace.pk]),
        {
            "name": "Hasty",
            "colour": "#112233",
            "policy_name": "never",
            "mode": "suggest_only",
            "question_timeout_minutes": "-5",
        },
    )

    assert response.status_code == 400
    assert not Agent.objects.exists()


def test_the_agent_cards_read_the_agents_once(
    task: Task, mira: Agent, make_agent: Callable[..., Agent], alice: User
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agents.selectors import list_task_agents, task_agent_cards

    retired = make_agent("Retired")
    retired.tasks.add(task)
    make_agent("Nova")
    make_agent("Gone")
    Agent.objects.filter(name__in=["Retired", "Gone"]).update(is_active=False)
    elsewhere = factories.make_workspace(alice)
    Agent.objects.create(workspace=elsewhere, name="Far", created_by=alice)

    with CaptureQueriesContext(connection) as captured:
        cards = task_agent_cards(task)
    reads = [q for q in captured.captured_queries if 'FROM "agents_agent"' in q["sql"]]

    assert len(reads) == 1
    rows = [row.agent.name for row in cards["rows"]]
    addable = [agent.name for agent in cards["addable"]]
    assert {"Mira", "Retired"} <= set(rows)
    assert not {"Nova", "Gone", "Far"} & set(rows)
    assert "Nova" in addable
    assert not {"Mira", "Retired", "Gone", "Far"} & set(addable)
    # The same cards as reading the task's agents and the workspace's active ones apart.
    assert [(r.agent.pk, r.turn) for r in cards["rows"]] == [
        (r.agent.pk, r.turn) for r in list_task_agents(task)
    ]
    on_task = {r.agent.pk for r in cards["rows"]}
    assert [a.pk for a in cards["addable"]] == [
        a.pk
        for a in Agent.objects.filter(workspace_id=task.workspace_id, is_active=True)
        if a.pk not in on_task
    ]


def test_a_free_form_task_the_agents_read_as_a_kind_says_so(
    as_user: Any, bob: User, task: Task
) -> None:
    task.title, task.goal = "Year 9 lesson plan on volcanoes", "50-minute lesson"
    task.save()
    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))
    assert b"Free-form task \xc2\xb7 the agents read it as: <strong>Lesson plan</strong>" in (
        page.content
    )
    task.title, task.goal = "Tidy the shed", ""
    task.save()
    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))
    assert b"the agents read it as" not in page.content
