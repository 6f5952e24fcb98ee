from __future__ import annotations

from django import forms

from collab.workspaces.models import INSTRUCTIONS_MAX_CHARS, Role


class WorkspaceForm(forms.Form):
    name = forms.CharField(max_length=120)
    agent_name = forms.CharField(
        max_length=32,
        required=False,
        label="Its agent's name",
        help_text="The workspace comes with an AI agent that people @mention in a task's chat. "
        "Empty: Assistant.",
    )


class InvitationForm(forms.Form):
    role = forms.ChoiceField(choices=[(Role.EDITOR, "Editor"), (Role.VIEWER, "Viewer")])
    max_uses = forms.IntegerField(min_value=1, max_value=1000, initial=1, label="Uses")
    days = forms.IntegerField(min_value=1, max_value=90, initial=7, label="Valid for (days)")


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class InstructionsForm(forms.Form):
    instructions = forms.CharField(
        required=False,
        max_length=INSTRUCTIONS_MAX_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 10}),
        label="Workspace instructions",
        help_text=(
            "Every agent of this workspace reads these in every turn, before its own "
            f"instructions. Up to {INSTRUCTIONS_MAX_CHARS:,} characters."
        ),
    )
