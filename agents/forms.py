from __future__ import annotations

from django import forms

from agents.models import Agent, ModelProfile


def _policy_choices() -> list[tuple[str, str]]:
    from agents.policies import registered_names

    return [(name, name.replace("_", " ")) for name in registered_names()]


class AgentForm(forms.ModelForm):
    policy_name = forms.ChoiceField(
        choices=_policy_choices,
        initial="never",
        label="Clarification policy",
        help_text="When the agent asks before acting (see docs/policies.md).",
    )
    model_profile = forms.ModelChoiceField(
        queryset=ModelProfile.objects.order_by("name"),
        required=False,
        empty_label="Embedded local model (small)",
    )

    class Meta:
        model = Agent
        fields = [
            "name",
            "colour",
            "instructions",
            "model_profile",
            "policy_name",
            "mode",
            "on_mention",
            "on_every_message",
            "on_idle_document",
            "ask_button",
            "is_active",
        ]
        widgets = {
            "colour": forms.TextInput(attrs={"type": "color"}),
            "instructions": forms.Textarea(attrs={"rows": 4}),
        }

    def validate_unique(self) -> None:
        """The service checks the name within the workspace."""


class AskForm(forms.Form):
    prompt = forms.CharField(required=False, max_length=1500, strip=True)


class AnswerForm(forms.Form):
    answer = forms.CharField(max_length=1500, strip=True)


class AcceptForm(forms.Form):
    text = forms.CharField(required=False, max_length=6000, strip=False)
    edited = forms.BooleanField(required=False)
