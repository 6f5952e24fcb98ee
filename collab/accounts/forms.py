from __future__ import annotations

import zoneinfo

from django import forms
from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.contrib.auth.models import User

# One answer for every name that cannot be had, so the form is no quicker way to learn who has
# an account than the people list of a shared workspace (and failures are throttled).
USERNAME_UNAVAILABLE = "This username is not available. Choose another."


class SignUpForm(UserCreationForm):
    """Django's sign-up form: a username, an optional e-mail address (for password resets) and
    a password typed twice."""

    email = forms.EmailField(
        required=False, help_text="Optional: lets you reset a forgotten password."
    )

    class Meta:
        model = User
        fields = ("username", "email")
        field_classes = {"username": UsernameField}

    username_taken = False

    def clean_username(self) -> str:
        username = str(self.cleaned_data.get("username") or "")
        if username and User.objects.filter(username__iexact=username).exists():
            self.username_taken = True
            raise forms.ValidationError(USERNAME_UNAVAILABLE, code="unavailable")
        return username


def time_zone_choices() -> list[tuple[str, str]]:
    zones = sorted(zone for zone in zoneinfo.available_timezones() if "/" in zone or zone == "UTC")
    return [("", "Your browser's time zone"), *((zone, zone.replace("_", " ")) for zone in zones)]


class ProfileForm(forms.ModelForm):
    """What others see of you, where password reset mails go, and the time zone of times."""

    time_zone = forms.ChoiceField(
        label="Time zone",
        required=False,
        choices=time_zone_choices,
        help_text="Times in the chat, the document history, the review pages and your tokens "
        "are shown in it.",
    )

    class Meta:
        model = User
        fields = ("first_name", "email")
        labels = {"first_name": "Display name", "email": "E-mail address"}
        help_texts = {
            "first_name": "Optional: how you would like to be called. Your username stays "
            "what @mentions and member lists use.",
            "email": "Optional: where a password reset link is sent. Never shown to others.",
        }


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Where you will use it, e.g. “laptop script”.")
