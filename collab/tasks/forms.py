from __future__ import annotations

from django import forms
from django.conf import settings

from collab.tasks.models import TaskStatus
from collab.tasks.task_templates import template_choices


class TaskForm(forms.Form):
    title = forms.CharField(max_length=200)
    goal = forms.CharField(
        max_length=10_000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What should be true when this task is done?",
    )
    template = forms.ChoiceField(
        label="Start from a template",
        choices=template_choices,
        required=False,
        help_text="A template tells the agents what the task needs (and starts the document "
        "with its headings); free-form tasks rely on the agents reading the request.",
    )


class MessageForm(forms.Form):
    body = forms.CharField(
        max_length=settings.CHAT_MESSAGE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Write a message (markdown)"}),
        error_messages={
            "max_length": "Messages are limited to %(limit_value)s characters; "
            "this one has %(show_value)s."
        },
    )


class StatusForm(forms.Form):
    status = forms.ChoiceField(choices=TaskStatus.choices)
