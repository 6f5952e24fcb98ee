from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django import forms
from django.utils import timezone

from agents.models import TurnStatus
from agents.review.models import ReviewSettings
from agents.review.traces import Cursor, TraceFilter, decode_cursor
from agents.review.usage import DIMENSIONS

YES_NO = [("", "Any"), ("yes", "Yes"), ("no", "No")]
DECISIONS = [("", "Any decision"), ("ask", "Ask"), ("suggest", "Suggest"), ("act", "Act")]
DATE = forms.DateInput(attrs={"type": "date"})


def _yes_no(value: str) -> bool | None:
    return {"yes": True, "no": False}.get(value)


class TraceFilterForm(forms.Form):
    view = forms.ChoiceField(choices=[("calls", "Model calls"), ("turns", "Turns")], required=False)
    q = forms.CharField(max_length=200, required=False, label="Search prompts and responses")
    workspace = forms.IntegerField(required=False, min_value=1, label="Workspace id")
    task = forms.IntegerField(required=False, min_value=1, label="Task id")
    agent = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)
    model = forms.CharField(max_length=200, required=False)
    status = forms.ChoiceField(choices=[("", "Any status"), *TurnStatus.choices], required=False)
    decision = forms.ChoiceField(choices=DECISIONS, required=False)
    policy = forms.CharField(max_length=40, required=False)
    since = forms.DateField(required=False, widget=DATE)
    until = forms.DateField(required=False, widget=DATE)
    has_feedback = forms.ChoiceField(choices=YES_NO, required=False)
    errored = forms.ChoiceField(choices=YES_NO, required=False, label="Has error")
    before = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)

    def clean_before(self) -> Cursor | None:
        value = self.cleaned_data.get("before") or ""
        if not value:
            return None
        try:
            return decode_cursor(value)
        except (ValueError, OverflowError, OSError):
            raise forms.ValidationError("Not a page of this list.") from None

    def __init__(self, *args: Any, agents: list[Any], staff: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["agent"]
        assert isinstance(field, forms.TypedChoiceField)
        field.choices = [("", "Any agent")] + [
            (agent.pk, f"{agent.name} ({agent.workspace.name})") for agent in agents
        ]
        if not staff:
            del self.fields["workspace"]

    def to_filter(self) -> TraceFilter:
        data = self.cleaned_data
        return TraceFilter(
            workspace=data.get("workspace"),
            task=data.get("task"),
            agent=data.get("agent"),
            model=data.get("model", ""),
            status=data.get("status", ""),
            decision=data.get("decision", ""),
            policy=data.get("policy", ""),
            since=data.get("since"),
            until=data.get("until"),
            has_feedback=_yes_no(data.get("has_feedback", "")),
            has_error=_yes_no(data.get("errored", "")),
            q=data.get("q", "").strip(),
        )


class UsageForm(forms.Form):
    since = forms.DateField(required=False, widget=DATE)
    until = forms.DateField(required=False, widget=DATE)
    by = forms.ChoiceField(choices=[(key, key.title()) for key in DIMENSIONS], required=False)
    metric = forms.ChoiceField(choices=[("cost", "Cost"), ("tokens", "Tokens")], required=False)

    MAX_DAYS = 366

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        today = timezone.now().date()
        until: date = data.get("until") or today
        since: date = data.get("since") or until - timedelta(days=29)
        if since > until:
            raise forms.ValidationError("The start is after the end.")
        if (until - since).days >= self.MAX_DAYS:
            raise forms.ValidationError(f"Choose at most {self.MAX_DAYS} days.")
        data.update(
            since=since,
            until=until,
            by=data.get("by") or "model",
            metric=data.get("metric") or "cost",
        )
        return data


class ExportRangeForm(forms.Form):
    since = forms.DateField(required=False, widget=DATE)
    until = forms.DateField(required=False, widget=DATE)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise forms.ValidationError("The start is after the end.")
        return data


class ReviewSettingsForm(forms.ModelForm):
    class Meta:
        model = ReviewSettings
        fields = ["monthly_budget", "warn_at_percent", "hard_stop", "export_personal_memory"]
