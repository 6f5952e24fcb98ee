"""/api/models (site administrators): the Models page's actions: add a model, edit one, test it
with one real call, make it the site's default. Through the page's form (its checks) and
``agents.profiles`` (``test_profile``, ``set_default``); everyone else gets 403, as the page
answers. The API key itself never passes here: a model names the environment variable."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.forms.models import model_to_dict
from django.http import Http404, HttpRequest
from ninja import Field, Router, Schema, Status
from ninja import Path as PathParam

from agents import llm, profiles
from agents.forms import ModelProfileForm
from agents.models import ModelProfile
from collab.api.auth import current_user
from collab.api.schemas import MAX_ID, BadRequest, Error, PathId, StoredText, body_config
from collab.lib.env import env_str

router = Router(tags=["models"])  # mounted under /api/models

STAFF = {400: BadRequest, 401: Error, 403: Error, 404: Error}
# A model's id, or 0 for the built-in small model (the Models page's first row).
ProfileOrBuiltIn = Annotated[int, PathParam(ge=0, le=MAX_ID)]


class ModelOut(Schema):
    id: int
    name: str
    label: str = Field(description="The model in plain words, as on the agents page.")
    is_default: bool


class ProfileOut(Schema):
    id: int
    name: str
    provider: str = Field(description="`openai` (any compatible server), `anthropic`, `embedded`.")
    model: str
    base_url: str
    api_key_env: str = Field(description="The NAME of the variable holding the key.")
    key_set: bool = Field(description="Whether that variable is set on this server.")
    temperature: float
    max_tokens: int
    timeout_seconds: int
    price_in_per_1k: Decimal
    price_out_per_1k: Decimal
    is_default: bool
    label: str = Field(description="The model in plain words, as owners see it.")


class ProfileIn(Schema):
    """The Models page's form. On edit, fields left out keep their value."""

    model_config = body_config(
        {
            "name": "Team Ollama",
            "provider": "openai",
            "model": "llama3.2",
            "base_url": "http://127.0.0.1:11434/v1",
        }
    )

    name: StoredText | None = Field(None, max_length=80)
    provider: str | None = Field(None, max_length=20, description="`openai`, `anthropic`, …")
    model: StoredText | None = Field(None, max_length=200)
    base_url: StoredText | None = Field(None, max_length=200)
    api_key_env: StoredText | None = Field(None, max_length=100)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=16, le=32_000)
    timeout_seconds: int | None = Field(None, ge=1, le=600)
    price_in_per_1k: Decimal | None = Field(None, ge=0, max_digits=12, decimal_places=6)
    price_out_per_1k: Decimal | None = Field(None, ge=0, max_digits=12, decimal_places=6)


class TestOut(Schema):
    ok: bool
    answer: str = Field(description="What the model said (or the start of it, on an error).")
    kind: str = Field(description="The kind of action it chose (`reply`, `ask`, …).")
    latency_ms: int
    first_token_ms: int | None
    tokens_in: int | None
    tokens_out: int | None
    error: str = Field(description="What is wrong, in plain words, when it failed.")
    note: str = Field(description="After a call that worked: something still worth fixing.")


class DefaultOut(Schema):
    default: ProfileOut | None = Field(description="null: the built-in small model.")


def _staff(request: HttpRequest) -> User:
    user = current_user(request)
    if not user.is_staff:
        raise PermissionDenied("Only site administrators manage models.")
    return user


def _profile(profile_id: int) -> ModelProfile:
    profile = ModelProfile.objects.filter(pk=profile_id).first()
    if profile is None:
        raise Http404("No such model.")
    return profile


def profile_out(profile: ModelProfile) -> dict[str, Any]:
    return {
        "id": profile.pk or 0,
        "name": profile.name,
        "provider": profile.provider,
        "model": profile.model,
        "base_url": profile.base_url,
        "api_key_env": profile.api_key_env,
        "key_set": bool(profile.api_key_env and env_str(profile.api_key_env)),
        "temperature": profile.temperature,
        "max_tokens": profile.max_tokens,
        "timeout_seconds": profile.timeout_seconds,
        "price_in_per_1k": profile.price_in_per_1k,
        "price_out_per_1k": profile.price_out_per_1k,
        "is_default": profile.is_default,
        "label": profiles.describe(profile),
    }


def _save(payload: ProfileIn, instance: ModelProfile | None) -> ModelProfile:
    """The page's form, filled with what is stored (a new model: the defaults) and what the
    request changes."""
    stored = instance if instance is not None else ModelProfile()
    data: dict[str, Any] = model_to_dict(stored, fields=list(ModelProfileForm.Meta.fields))
    data.update(payload.dict(exclude_none=True))
    form = ModelProfileForm(
        {k: "" if v is None else str(v) for k, v in data.items()}, instance=instance
    )
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return form.save()


@router.get(
    "/site",
    response={200: list[ProfileOut], **STAFF},
    summary="List the site's models with their settings (staff)",
)
def list_profiles(request: HttpRequest) -> list[dict[str, Any]]:
    _staff(request)
    return [profile_out(p) for p in ModelProfile.objects.order_by("name")]


@router.post("", response={201: ProfileOut, **STAFF}, summary="Add a model (staff)")
def add_profile(request: HttpRequest, payload: ProfileIn) -> Status[dict[str, Any]]:
    """Checked as the page's form checks it (a model name for hosted providers, a key variable
    where one is needed, a base URL Collab may reach). Test it, then make it the default."""
    _staff(request)
    return Status(201, profile_out(_save(payload, None)))


@router.patch("/{profile_id}", response={200: ProfileOut, **STAFF}, summary="Edit a model (staff)")
def edit_profile(request: HttpRequest, profile_id: PathId, payload: ProfileIn) -> dict[str, Any]:
    _staff(request)
    return profile_out(_save(payload, _profile(profile_id)))


@router.post(
    "/{profile_id}/test",
    response={200: TestOut, **STAFF},
    summary="Test a model with one real call: its answer and latency, or what is wrong (staff)",
)
def test_profile(request: HttpRequest, profile_id: ProfileOrBuiltIn) -> Any:
    """`0` tests the built-in small model. A failed call is a 200 with `ok: false` and the
    exact error in plain words, as the Test button shows it."""
    _staff(request)
    profile = llm.embedded_profile() if profile_id == 0 else _profile(profile_id)
    return profiles.test_profile(profile)


@router.post(
    "/{profile_id}/default",
    response={200: DefaultOut, **STAFF},
    summary="Make a model the site's default: agents without a model of their own use it (staff)",
)
def make_default(request: HttpRequest, profile_id: ProfileOrBuiltIn) -> dict[str, Any]:
    """`0` makes the built-in small model the default again."""
    _staff(request)
    profile = None if profile_id == 0 else _profile(profile_id)
    profiles.set_default(profile)
    return {"default": None if profile is None else profile_out(profile)}


@router.get(
    "",
    response={200: list[ModelOut], 401: Error},
    summary="List the models an owner can give an agent (site administrators add them)",
)
def list_models(request: HttpRequest) -> list[dict[str, Any]]:
    current_user(request)
    return [_model(profile) for profile in profiles.user_choices()]


def _model(profile: ModelProfile) -> dict[str, Any]:
    return {
        "id": profile.pk,
        "name": profile.name,
        "label": profiles.describe(profile),
        "is_default": profile.is_default,
    }
