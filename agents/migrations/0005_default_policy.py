"""New agents get the policy that asks well (agents.policies.DEFAULT_POLICY, docs/policies.md).

Agents still on the old default ("never") move to it only if their owner never chose "never".
Nothing recorded which agents an owner configured, so the rule reads what the data shows: an
agent that ever took a turn under another policy had that policy chosen for it, and being on
"never" now means its owner switched it back; it stays. An agent that only ever ran "never"
(or never ran) got "never" from the old field default, the old form's preselected value or the
default agent made for a new workspace: it moves. The reverse migration moves those same
agents back only if they are still on the new default.
"""

from __future__ import annotations

from django.db import migrations, models

OLD_DEFAULT = "never"
NEW_DEFAULT = "ask_when_blocked"


def never_chosen(Agent, Turn):
    chose_other = (
        Turn.objects.exclude(policy_name__in=["", OLD_DEFAULT])
        .values_list("agent_id", flat=True)
        .distinct()
    )
    return Agent.objects.filter(policy_name=OLD_DEFAULT).exclude(pk__in=chose_other)


def forwards(apps, schema_editor):
    Agent, Turn = apps.get_model("agents", "Agent"), apps.get_model("agents", "Turn")
    never_chosen(Agent, Turn).update(policy_name=NEW_DEFAULT)


def backwards(apps, schema_editor):
    Agent, Turn = apps.get_model("agents", "Agent"), apps.get_model("agents", "Turn")
    chose_other = (
        Turn.objects.exclude(policy_name__in=["", OLD_DEFAULT, NEW_DEFAULT])
        .values_list("agent_id", flat=True)
        .distinct()
    )
    Agent.objects.filter(policy_name=NEW_DEFAULT).exclude(pk__in=chose_other).update(
        policy_name=OLD_DEFAULT
    )


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0004_remember_action"),
    ]

    operations = [
        migrations.AlterField(
            model_name="agent",
            name="policy_name",
            field=models.CharField(default=NEW_DEFAULT, max_length=40),
        ),
        migrations.RunPython(forwards, backwards),
    ]
