from __future__ import annotations

import zoneinfo

from django import forms
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm, UsernameField
from django.contrib.auth.models import User
from django.core.validators import MaxLengthValidator

# Longest password any form takes: far above any real one, and a bound on what is hashed.
PASSWORD_MAX_CHARS = 4096
# Django's own user table: usernames and e-mail addresses.
USERNAME_MAX_CHARS = User._meta.get_field("username").max_length or 150
EMAIL_MAX_CHARS = User._meta.get_field("email").max_length or 254


def _bound_passwords(form: forms.BaseForm, *names: str) -> None:
    for name in names:
        field = form.fields[name]
        if isinstance(field, forms.CharField):
            field.max_length = PASSWORD_MAX_CHARS
        field.validators.append(MaxLengthValidator(PASSWORD_MAX_CHARS))


class LoginForm(AuthenticationForm):
    """Django's login form with its length bounds enforced: Django only sets the username's
    ``max_length`` (for the widget) after the field is built, so no validator checks it, and an
    overlong name reached ``authenticate`` and django-axes' 255-character column (a 500 on
    PostgreSQL). A field error here means ``authenticate`` is never called."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        username = self.fields["username"]
        username.validators.append(MaxLengthValidator(USERNAME_MAX_CHARS))
        _bound_passwords(self, "password")


# One answer for every name that cannot be had, so the form is no quicker way to learn who has
# an account than the people list of a shared workspace (and failures are throttled).
USERNAME_UNAVAILABLE = "This username is not available. Choose another."


class SignUpForm(UserCreationForm):
    """Django's sign-up form: a username, an optional e-mail address (for password resets) and
    a password typed twice."""

    email = forms.EmailField(
        required=False,
        max_length=EMAIL_MAX_CHARS,
        help_text="Optional: lets you reset a forgotten password.",
    )

    class Meta:
        model = User
        fields = ("username", "email")
        field_classes = {"username": UsernameField}

    username_taken = False

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        _bound_passwords(self, "password1", "password2")

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
