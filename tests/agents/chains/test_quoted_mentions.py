"""A name an agent quotes is not a name it addresses (issue 30): an @name inside quotes, a code
span, a fenced block or a quoted line of an agent's reply starts no hop to that agent."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from langchain_core.messages import BaseMessage

from agents.llm import fakes
from agents.models import Agent, Hop, Turn
from agents.services.chains import addressed_names
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories

QUOTING = (
    'The text "@Analyst" in the brief is a typo; write `@Analyst` as the role, and '
    "the “@Analyst” column stays.\n> @Analyst said the numbers were final\n"
    "```\nping @Analyst\n```"
)


def _quotes_the_analyst(messages: list[BaseMessage]) -> str:
    return fakes._decision({"kind": "reply", "text": QUOTING})


fakes.register_fake_behaviour("chain-quotes-analyst", _quotes_the_analyst)


def test_a_quoted_or_code_name_is_not_addressed_and_a_plain_one_is() -> None:
    def names(body: str) -> set[str]:
        return addressed_names(agent_name="Writer", body=body, echoed=[])

    assert names(QUOTING) == set()
    assert names('Use "@Analyst" as the label') == set()
    assert names("Set `@Analyst` in the config") == set()
    assert names("@Analyst please check the totals") == {"analyst"}
    assert names('@Analyst please fix the label "@Reviewer"') == {"analyst"}
    assert names('He said "hi" and @Analyst should check it') == {"analyst"}


def test_an_agent_reply_quoting_another_agents_name_starts_no_hop(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Writer", "chain-quotes-analyst")
    on_task("Analyst", "echo")

    task_services.post_message(
        membership=factories.membership_of(workspace, bob), task=task, body="@Writer fix the brief"
    )
    ran = run_queued()

    assert ran == ["Writer"]
    assert task.messages.filter(author_name="Writer", kind=Message.Kind.AGENT).get().body == QUOTING
    assert not Hop.objects.exists()
    assert not Turn.objects.filter(agent__name="Analyst").exists()
