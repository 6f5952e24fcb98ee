"""Every existing workspace without an agent gets its default agent ("Assistant"), as new
workspaces do (``agents/defaults.py``): the default policy, the site's default model, on all
of the workspace's tasks and every new one."""

from __future__ import annotations

from django.db import migrations

from collab.lib.colors import PALETTE


def add_default_agents(apps, schema_editor):
    from agents.policies import DEFAULT_POLICY

    Agent = apps.get_model("agents", "Agent")
    Workspace = apps.get_model("workspaces", "Workspace")
    Membership = apps.get_model("workspaces", "Membership")
    Task = apps.get_model("tasks", "Task")
    for workspace in Workspace.objects.filter(agents__isnull=True).distinct():
        owner = Membership.objects.filter(workspace=workspace, role="owner").order_by("id").first()
        agent = Agent.objects.create(
            workspace=workspace,
            name="Assistant",
            colour=PALETTE[0],
            policy_name=DEFAULT_POLICY,
            joins_new_tasks=True,
            created_by_id=owner.user_id if owner else None,
        )
        agent.tasks.add(*Task.objects.filter(workspace=workspace))


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0006_model_defaults"),
        ("workspaces", "0002_workspace_instructions"),
        ("tasks", "0005_task_status_change"),
    ]

    operations = [migrations.RunPython(add_default_agents, migrations.RunPython.noop)]
