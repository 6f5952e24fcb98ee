"""Every new agent gets the policy that asks well; agents left on the old default move to it
only if their owner never chose "never" (agents/migrations/0005_default_policy.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.forms import AgentForm
from agents.models import Agent
from agents.policies import DEFAULT_POLICY
from collab.tasks.models import Task
from collab.workspaces.models import Workspace


def test_a_new_agent_gets_the_default_policy(make_agent):
    assert DEFAULT_POLICY == "ask_when_blocked"
    assert make_agent("Mira").policy_name == DEFAULT_POLICY


def test_the_agent_form_offers_the_default_policy_first():
    assert AgentForm().fields["policy_name"].initial == DEFAULT_POLICY
    assert Agent._meta.get_field("policy_name").default == DEFAULT_POLICY


BEFORE = [("agents", "0004_remember_action")]
AFTER = [("agents", "0005_default_policy")]


@pytest.fixture
def _back_to_the_newest_schema():
    """Later migrations exist: leave the database at the newest state, as the other tests
    expect it."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("_back_to_the_newest_schema")
def test_only_agents_whose_owner_never_chose_never_move_to_the_default():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    OldAgent, Turn = old.get_model("agents", "Agent"), old.get_model("agents", "Turn")
    # The platform's tables are at their newest state: make rows with today's models.
    owner = User.objects.create(username="owner")
    workspace = Workspace.objects.create(name="W")
    task = Task.objects.create(workspace=workspace, title="T")

    def agent(name, **fields):
        return OldAgent.objects.create(
            workspace_id=workspace.pk, name=name, created_by_id=owner.pk, **fields
        )

    untouched, ran_never, switched_back = agent("Untouched"), agent("RanNever"), agent("Back")
    chosen = agent("Chosen", policy_name="bandit")
    Turn.objects.create(agent=ran_never, task_id=task.pk, policy_name="never")
    Turn.objects.create(agent=switched_back, task_id=task.pk, policy_name="value_of_information")

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("agents", "Agent")

    policies = dict(new.objects.values_list("name", "policy_name"))
    assert policies == {
        "Untouched": "ask_when_blocked",
        "RanNever": "ask_when_blocked",
        "Back": "never",  # it once ran another policy: its owner chose "never" since
        "Chosen": "bandit",
    }
    assert {untouched.pk, ran_never.pk} == set(
        new.objects.filter(policy_name="ask_when_blocked").values_list("pk", flat=True)
    )
    assert chosen.pk
    assert switched_back.pk
