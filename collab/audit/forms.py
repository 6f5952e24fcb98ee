from __future__ import annotations

from django import forms

from collab.audit.models import AuditEvent


class AuditFilterForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("", "Any action"), *AuditEvent.Action.choices], required=False
    )
    actor = forms.CharField(max_length=150, required=False, label="Who")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
