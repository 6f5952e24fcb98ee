from __future__ import annotations

from django import forms

from agents.memory.models import (
    KEY_MAX_CHARS,
    TEXT_MAX_CHARS,
    VALUE_MAX_CHARS,
    Kind,
    ReviewMode,
    Scope,
)

IMPORT_MAX_BYTES = 1_000_000


class ItemForm(forms.Form):
    text = forms.CharField(max_length=TEXT_MAX_CHARS, widget=forms.TextInput(attrs={"size": 60}))
    kind = forms.ChoiceField(choices=Kind.choices, initial=Kind.PREFERENCE)
    key = forms.CharField(
        max_length=KEY_MAX_CHARS,
        required=False,
        help_text="Optional structured form, e.g. lists, spelling, tone, max_words, asking.",
    )
    value = forms.CharField(max_length=VALUE_MAX_CHARS, required=False)


class NewItemForm(ItemForm):
    where = forms.CharField(
        max_length=40,
        initial=Scope.PERSONAL,
        help_text='"personal", or "workspace:<id>" / "team:<id>".',
    )

    def clean_where(self) -> tuple[str, int | None]:
        raw = str(self.cleaned_data["where"]).strip()
        scope, _, workspace = raw.partition(":")
        if scope == Scope.PERSONAL and not workspace:
            return (scope, None)
        if scope in (Scope.WORKSPACE, Scope.TEAM) and workspace.isdigit():
            return (scope, int(workspace))
        raise forms.ValidationError("Choose where this memory applies.")


class SettingsForm(forms.Form):
    enabled = forms.BooleanField(required=False, label="Agents may remember things about me")
    review_mode = forms.ChoiceField(choices=ReviewMode.choices, widget=forms.RadioSelect)
    admin_access_allowed = forms.BooleanField(
        required=False, label="Site admins may read my memory (every read is audited)"
    )


class ImportForm(forms.Form):
    file = forms.FileField(help_text="A JSON file from “Export”.")

    def clean_file(self) -> bytes:
        upload = self.cleaned_data["file"]
        if upload.size > IMPORT_MAX_BYTES:
            raise forms.ValidationError("The file is larger than 1 MB.")
        return bytes(upload.read())


class ForgetEverythingForm(forms.Form):
    confirm = forms.CharField(help_text="Type “forget everything” to confirm.")

    def clean_confirm(self) -> str:
        value = str(self.cleaned_data["confirm"]).strip().lower()
        if value != "forget everything":
            raise forms.ValidationError("Type “forget everything” to confirm.")
        return value
