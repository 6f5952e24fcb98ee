from __future__ import annotations

from typing import Any

from django import forms
from django.utils.functional import lazy

from agents import llm, policies
from agents.defaults import free_colour
from agents.engine.signals import calls_per_turn
from agents.llm.endpoints import validate_base_url
from agents.models import AGENT_FIELDS, Agent, AgentMode, ModelProfile
from agents.policies.registry import DEFAULT_POLICY
from agents.profiles import describe, resolve_profile, site_default, user_choices

# What each clarification policy does, in one sentence (docs/policies.md has the rules).
POLICY_WORDS: dict[str, str] = {
    "ask_when_blocked": "Asks only about what blocks the work (a conflict, an ambiguity, a value "
    "nothing states), once; otherwise it acts and says what it assumed.",
    "never": "Never asks: it acts at once on its best reading and says what it assumed.",
    "ask_once": "Asks one batched question when something the task needs is missing, then acts.",
    "llm_judge": "Asks its model how unclear the request is, and asks you only when it is very "
    "unclear.",
    "intent_sampling": "Reads the request several ways and asks only where the readings disagree.",
    "value_of_information": "Asks only when a wrong guess would cost more than your time to "
    "answer; otherwise it acts or suggests.",
    "bandit": "Learns from your thumbs up and down when asking is worth it for this workspace.",
}


# The same in a few words, for an agent's card ("Sage: ... · never asks").
POLICY_PHRASES: dict[str, str] = {
    "ask_when_blocked": "asks when blocked",
    "never": "never asks",
    "ask_once": "asks once when something is missing",
    "llm_judge": "asks when its model finds the request unclear",
    "intent_sampling": "asks where readings of the request disagree",
    "value_of_information": "asks when a wrong guess would cost more",
    "bandit": "learns when to ask from feedback",
}


def policy_phrase(name: str) -> str:
    """How an agent with the clarification policy ``name`` asks, in a few words."""
    return POLICY_PHRASES.get(name, f"asks by the {name.replace('_', ' ')} policy")


def _default_policy() -> str:
    return policies.DEFAULT_POLICY  # read at call time: asking may change it


def policy_options() -> list[dict[str, Any]]:
    """Each policy: its name, plain words, extra model calls, and whether it is recommended."""
    options = []
    for name in policies.registered_names():
        calls = calls_per_turn(name)
        options.append(
            {
                "name": name,
                "label": name.replace("_", " "),
                "words": POLICY_WORDS.get(name, "A custom policy (see docs/policies.md)."),
                "calls": calls,
                "recommended": name == _default_policy(),
            }
        )
    return options


def _policy_choices() -> list[tuple[str, str]]:
    choices = []
    for option in policy_options():
        calls = option["calls"]
        cost = f" (up to {calls} more model call{'s' if calls > 1 else ''} a turn)" if calls else ""
        recommended = " (recommended)" if option["recommended"] else ""
        choices.append((option["name"], option["label"] + recommended + cost))
    return choices


class ProfileChoiceField(forms.ModelChoiceField):
    """Models in plain words; the empty choice is the site's default model."""

    def label_from_instance(self, obj: Any) -> str:
        return describe(obj)


def _default_model_words() -> str:
    default = site_default()
    label = describe(default) if default else resolve_profile(None).label
    return f"The site's default model: {label}"


# The agent page's groups of settings, in order (the template renders each as a fieldset).
AGENT_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Who it is", "How people see it and @mention it.", ("name", "colour", "instructions")),
    (
        "How it thinks",
        "Which model answers, and when it asks before acting.",
        ("model_profile", "policy_name", "question_timeout_minutes", "learn_per_person"),
    ),
    (
        "What it may do",
        "Whether it changes the document itself or proposes changes for people to accept.",
        ("mode",),
    ),
    (
        "When it works",
        "What starts one of its turns.",
        (
            "on_mention",
            "on_every_message",
            "on_idle_document",
            "ask_button",
            "joins_new_tasks",
            "is_active",
        ),
    ),
)


class AgentForm(forms.ModelForm):
    policy_name = forms.ChoiceField(
        choices=_policy_choices,
        initial=DEFAULT_POLICY,
        label="When it asks before acting",
        help_text="Its clarification policy. Some ask the agent's model about the request "
        "first, which costs extra model calls.",
    )
    model_profile = ProfileChoiceField(
        queryset=ModelProfile.objects.none(),
        required=False,
        label="Model",
        help_text="Site administrators add models on the Models page.",
    )

    question_timeout_minutes = forms.IntegerField(
        min_value=0,
        max_value=7 * 24 * 60,
        required=False,
        initial=10,
        label="Go ahead after (minutes)",
        help_text=(
            "When nobody answers its question within this time, it goes ahead on its best "
            "guess and says what it assumed (undoable). 0: wait for an answer. Empty: 10."
        ),
    )

    class Meta:
        model = Agent
        fields = list(AGENT_FIELDS)
        widgets = {
            "colour": forms.TextInput(attrs={"type": "color"}),
            "instructions": forms.Textarea(attrs={"rows": 3}),
        }
        labels = {
            "name": "Name",
            "colour": "Colour",
            "instructions": "Instructions",
            "mode": "Document changes",
            "on_mention": "When someone @mentions it",
            "on_every_message": "On every chat message of its tasks",
            "on_idle_document": "When the document has been quiet for a while",
            "ask_button": "Show an Ask button on its card",
            "joins_new_tasks": "Join every new task of the workspace",
            "is_active": "Switched on",
            "learn_per_person": "Learn each person's taste separately (learning policy only)",
        }
        help_texts = {
            "name": "Letters, digits, - and _; people write @name to ask it.",
            "instructions": "What it should always keep in mind (optional).",
            "is_active": "Switched off, it takes no turns and cannot be asked.",
        }

    def __init__(self, *args: Any, workspace_id: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A new agent wears a colour no other agent of its workspace wears (empty: that one).
        self.fields["colour"].required = False
        if not self.instance.pk and workspace_id is not None and not self.is_bound:
            self.initial.setdefault("colour", free_colour(workspace_id))

        field = self.fields["model_profile"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = user_choices()  # lazy: read when the choices are rendered
        field.empty_label = lazy(_default_model_words, str)()
        if not self.instance.pk and not self.is_bound:
            self.initial.setdefault("policy_name", _default_policy())

    def groups(self) -> list[dict[str, Any]]:
        return [
            {"title": title, "words": words, "fields": [self[name] for name in names]}
            for title, words, names in AGENT_GROUPS
            if all(name in self.fields for name in names)
        ]

    def clean_colour(self) -> str:
        colour = self.cleaned_data.get("colour") or ""
        return colour or (self.instance.colour if self.instance.pk else "")

    def clean_question_timeout_minutes(self) -> int:
        value = self.cleaned_data.get("question_timeout_minutes")
        return 10 if value is None else int(value)

    def validate_unique(self) -> None:
        """The service checks the name within the workspace."""


class ModelProfileForm(forms.ModelForm):
    """A model on the Models page (site administrators)."""

    provider = forms.ChoiceField(
        choices=[
            ("openai", "OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp server)"),
            ("anthropic", "Anthropic"),
            ("embedded", "The built-in small model (runs on this server)"),
        ],
        label="Kind",
    )
    base_url = forms.URLField(
        required=False,
        assume_scheme="http",
        label="Base URL",
        help_text="OpenAI-compatible servers only, e.g. http://127.0.0.1:11434/v1 for Ollama; "
        "empty for OpenAI itself.",
    )

    class Meta:
        model = ModelProfile
        fields = [
            "name",
            "provider",
            "model",
            "base_url",
            "api_key_env",
            "temperature",
            "max_tokens",
            "timeout_seconds",
            "price_in_per_1k",
            "price_out_per_1k",
        ]
        labels = {
            "model": "Model name",
            "api_key_env": "API key variable",
            "max_tokens": "Longest answer (tokens)",
            "timeout_seconds": "Timeout (seconds)",
            "price_in_per_1k": "Price per 1,000 input tokens",
            "price_out_per_1k": "Price per 1,000 output tokens",
        }
        help_texts = {
            "name": "How owners see it when they pick an agent's model.",
            "model": "As the provider names it, e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.2.",
            "api_key_env": "The NAME of the environment variable that holds the key, e.g. "
            "OPENAI_API_KEY (the key never goes into the database). Local servers need none.",
            "price_in_per_1k": "What the provider charges, in your budget's currency; 0 for a "
            "free or local model. Usage and budgets count cost from these two prices.",
            "price_out_per_1k": "Output tokens usually cost more than input tokens.",
        }

    def clean_base_url(self) -> str:
        return validate_base_url(str(self.cleaned_data.get("base_url") or ""))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        provider = data.get("provider")
        if provider in ("openai", "anthropic") and not data.get("model"):
            self.add_error("model", "Name the model, as the provider names it.")
        if provider == "anthropic" and not data.get("api_key_env"):
            self.add_error("api_key_env", "Anthropic needs an API key variable.")
        if provider == "openai" and not data.get("base_url") and not data.get("api_key_env"):
            self.add_error("api_key_env", "OpenAI itself needs an API key variable.")
        if provider == "embedded":
            data["model"] = data.get("model") or llm.embedded_profile().model
        return data


class OutsideAgentForm(forms.Form):
    """An agent whose work a program outside Collab does (docs/api.md, "Outside agents")."""

    name = forms.CharField(
        max_length=32,
        label="Outside agent's name",
        help_text="Letters, digits, - and _; people write @name.",
    )
    webhook_url = forms.CharField(
        max_length=500,
        required=False,
        label="Webhook URL",
        help_text="Where its turns are sent, signed. Empty: the program pulls them instead.",
    )
    a2a_card_url = forms.CharField(
        max_length=500,
        required=False,
        label="A2A agent card URL",
        help_text=(
            "Or an agent that speaks the Agent2Agent protocol: its agent card's URL "
            "(…/.well-known/agent-card.json). Give this or a webhook URL, not both."
        ),
    )
    mode = forms.ChoiceField(
        choices=AgentMode.choices,
        initial=AgentMode.SUGGEST_ONLY,
        label="What it may do to the document",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class AskForm(forms.Form):
    prompt = forms.CharField(required=False, max_length=1500, strip=True)


class AnswerForm(forms.Form):
    answer = forms.CharField(max_length=1500, strip=True)


class AcceptForm(forms.Form):
    text = forms.CharField(required=False, max_length=6000, strip=False)
    edited = forms.BooleanField(required=False)

    def clean_text(self) -> str:
        # A browser submits a textarea's line breaks as CRLF; the document uses LF.
        return str(self.cleaned_data.get("text") or "").replace("\r\n", "\n")


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
