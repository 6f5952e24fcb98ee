from __future__ import annotations

from typing import Any

from django import forms

from agents.models import Agent, ModelProfile


def _policy_choices() -> list[tuple[str, str]]:
    from agents.policies import registered_names
    from agents.signals import calls_per_turn

    choices = []
    for name in registered_names():
        calls = calls_per_turn(name)
        cost = f" (up to {calls} more model call{'s' if calls > 1 else ''} a turn)" if calls else ""
        choices.append((name, name.replace("_", " ") + cost))
    return choices


class AgentForm(forms.ModelForm):
    policy_name = forms.ChoiceField(
        choices=_policy_choices,
        initial="never",
        label="Clarification policy",
        help_text="When the agent asks before acting (see docs/policies.md). Some policies ask "
        "the agent's model about the request first, which costs extra calls.",
    )
    model_profile = forms.ModelChoiceField(
        queryset=ModelProfile.objects.order_by("name"),
        required=False,
        empty_label="Embedded local model (small)",
    )

    question_timeout_minutes = forms.IntegerField(
        min_value=0,
        max_value=7 * 24 * 60,
        required=False,
        initial=10,
        label="Question timeout (minutes)",
        help_text=(
            "When nobody answers the agent's question within this time, it goes ahead on its "
            "best guess and says what it assumed (undoable). 0: wait for an answer. "
            "Empty: 10."
        ),
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
            "question_timeout_minutes",
            "is_active",
            "learn_per_person",
        ]
        widgets = {
            "colour": forms.TextInput(attrs={"type": "color"}),
            "instructions": forms.Textarea(attrs={"rows": 4}),
        }

    def clean_question_timeout_minutes(self) -> int:
        value = self.cleaned_data.get("question_timeout_minutes")
        return 10 if value is None else int(value)

    def validate_unique(self) -> None:
        """The service checks the name within the workspace."""


class AskForm(forms.Form):
    prompt = forms.CharField(required=False, max_length=1500, strip=True)


class AnswerForm(forms.Form):
    answer = forms.CharField(max_length=1500, strip=True)


class AcceptForm(forms.Form):
    text = forms.CharField(required=False, max_length=6000, strip=False)
    edited = forms.BooleanField(required=False)


class FeedbackForm(forms.Form):
    """A feedback click or comment. Fields that are absent keep their stored value, so each
    button posts only what it changes (the service validates the values and says why)."""

    rating = forms.CharField(required=False, max_length=10, strip=True)
    toggle = forms.BooleanField(required=False)
    comment = forms.CharField(required=False, max_length=2000, strip=True)
    unnecessary = forms.ChoiceField(
        required=False, choices=[("1", "yes"), ("0", "no"), ("true", "yes"), ("false", "no")]
    )

    def service_arguments(self) -> dict[str, Any]:
        data, cleaned = self.data, self.cleaned_data
        arguments: dict[str, Any] = {"toggle": cleaned["toggle"]}
        if "rating" in data:
            arguments["rating"] = cleaned["rating"]
        if "comment" in data:
            arguments["comment"] = cleaned["comment"]
        if data.get("unnecessary"):
            arguments["unnecessary"] = cleaned["unnecessary"] in ("1", "true")
        return arguments
