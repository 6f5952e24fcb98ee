from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm


class SignUpForm(UserCreationForm):
    """Django's sign-up form: a username and a password typed twice."""


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Where you will use it, e.g. “laptop script”.")
