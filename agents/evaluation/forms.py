from __future__ import annotations

from typing import Any, cast

from django import forms

from agents.evaluation.models import MemoryChoice, Mode
from agents.evaluation.scenario import shipped_scenario_files
from agents.models import ModelProfile
from agents.policies import registered_names


class RunForm(forms.Form):
    scenarios = forms.ChoiceField(choices=())
    policies = forms.MultipleChoiceField(
        choices=(), widget=forms.CheckboxSelectMultiple, help_text="Compared side by side."
    )
    mode = forms.ChoiceField(choices=Mode.choices, initial=Mode.ORACLE)
    memory = forms.ChoiceField(choices=MemoryChoice.choices, initial=MemoryChoice.BOTH)
    model_profile = forms.ChoiceField(choices=(), required=False, help_text="For real signals.")
    seeds = forms.IntegerField(min_value=1, max_value=10, initial=1)
    sessions = forms.IntegerField(min_value=1, max_value=50, required=False)
    note = forms.CharField(max_length=200, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        scenarios = cast(forms.ChoiceField, self.fields["scenarios"])
        scenarios.choices = [(p.stem, p.stem) for p in shipped_scenario_files()]
        names = registered_names()
        policies = cast(forms.MultipleChoiceField, self.fields["policies"])
        policies.choices = [(n, n) for n in names]
        policies.initial = list(names)
        profiles = ModelProfile.objects.values_list("name", flat=True)
        profile = cast(forms.ChoiceField, self.fields["model_profile"])
        profile.choices = [("", "—"), *((n, n) for n in profiles)]
