"""Thin views for the agents pane and the agent management page.

Buttons post with htmx and get 204: the result reaches every open page (this one included)
over the task's WebSocket. Without JavaScript they redirect back to the task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from agents import llm, profiles, selectors
from agents.forms import (
    AcceptForm,
    AgentForm,
    AnswerForm,
    AskForm,
    FeedbackForm,
    ModelProfileForm,
    OutsideAgentForm,
    policy_options,
)
from agents.models import Agent, ModelProfile
from agents.services import agent_changes
from agents.services import agents as agent_services
from agents.services import edits as edit_services
from agents.services import feedback as feedback_services
from agents.services import outside as outside_services
from agents.services import plans as plan_services
from agents.services import questions as question_services
from agents.services import suggestions as suggestion_services
from agents.services import turns as turn_services
from collab.lib.env import env_str
from collab.lib.requests import AuthedRequest
from collab.lib.responses import bad_request, run_service
from collab.tasks.models import Task
from collab.tasks.selectors import get_task_access
from collab.workspaces.models import Membership
from collab.workspaces.selectors import get_membership


def _done(request: AuthedRequest, task_id: int) -> HttpResponse:
    if request.htmx:
        return HttpResponse(status=204)
    return redirect("tasks:detail", task_id=task_id)


def _run(request: AuthedRequest, task_id: int, action: Callable[[], object]) -> HttpResponse:
    return run_service(action, lambda: _done(request, task_id))


@login_required
@require_POST
def ask(request: AuthedRequest, task_id: int, agent_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    agent = selectors.get_workspace_agent(access.membership, agent_id)
    form = AskForm(request.POST)
    if not form.is_valid():
        return bad_request("Keep the request under 1,500 characters.")
    return _run(
        request,
        task_id,
        lambda: turn_services.ask_agent(
            membership=access.membership,
            agent=agent,
            task=access.task,
            prompt=form.cleaned_data["prompt"],
        ),
    )


@login_required
@require_POST
def stop(request: AuthedRequest, task_id: int, turn_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    turn = selectors.get_task_turn(access, turn_id)
    return _run(
        request, task_id, lambda: turn_services.cancel_turn(membership=access.membership, turn=turn)
    )


@login_required
@require_POST
def accept(request: AuthedRequest, task_id: int, suggestion_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    suggestion = selectors.get_task_suggestion(access, suggestion_id)
    form = AcceptForm(request.POST)
    if not form.is_valid():
        return bad_request("That change is too long.")
    text = form.cleaned_data["text"] if form.cleaned_data["edited"] else None
    return _run(
        request,
        task_id,
        lambda: suggestion_services.accept_suggestion(
            membership=access.membership, suggestion=suggestion, text=text
        ),
    )


@login_required
@require_POST
def reject(request: AuthedRequest, task_id: int, suggestion_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    suggestion = selectors.get_task_suggestion(access, suggestion_id)
    return _run(
        request,
        task_id,
        lambda: suggestion_services.reject_suggestion(
            membership=access.membership, suggestion=suggestion
        ),
    )


@login_required
@require_POST
def answer(request: AuthedRequest, task_id: int, question_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    question = selectors.get_task_question(access, question_id)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        return bad_request("Write an answer of at most 1,500 characters.")
    return _run(
        request,
        task_id,
        lambda: question_services.answer_question(
            membership=access.membership, question=question, answer=form.cleaned_data["answer"]
        ),
    )


@login_required
@require_POST
def undo_assumption(request: AuthedRequest, task_id: int, assumption_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    assumption = selectors.get_task_assumption(access, assumption_id)
    return _run(
        request,
        task_id,
        lambda: question_services.undo_assumption(
            membership=access.membership, assumption=assumption
        ),
    )


@login_required
@require_POST
def undo_edit(request: AuthedRequest, task_id: int, action_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    action = selectors.get_task_edit(access, action_id)
    return _run(
        request,
        task_id,
        lambda: edit_services.undo_agent_edit(membership=access.membership, action=action),
    )


@login_required
@require_POST
def add_to_task(request: AuthedRequest, task_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    try:
        agent_id = int(request.POST["agent"])
    except (KeyError, ValueError):
        return bad_request("Choose an agent.")
    agent = selectors.get_workspace_agent(access.membership, agent_id)
    agent_services.add_agent_to_task(membership=access.membership, agent=agent, task=access.task)
    if not request.htmx:
        return redirect("tasks:detail", task_id=task_id)
    # Open pages get the agent's card live; this page may not have its socket open yet (it
    # was loaded a moment ago), so the answer carries the cards too (an out-of-band swap).
    context = {
        "task": access.task,
        "panel": selectors.task_agent_cards(access.task),
        "oob": True,
        "can_edit": True,
    }
    return render(request, "agents/_agent_cards_oob.html", context)


def _save_agent(form: AgentForm, save: Callable[..., Agent]) -> Agent | None:
    if not form.is_valid():
        return None
    try:
        return save(**form.cleaned_data)
    except ValidationError as exc:
        form.add_error(None, exc)
        return None


def _back_to_task(request: AuthedRequest, workspace_id: int) -> Task | None:
    """The task the owner came from (``?task=<id>``), if they may see it."""
    raw = request.GET.get("task") or request.POST.get("back_to_task") or ""
    if not raw.isdigit():
        return None
    try:
        access = get_task_access(request.user, int(raw))
    except Http404:
        return None
    return access.task if access.task.workspace_id == workspace_id else None


def _agent_page_context(
    request: AuthedRequest, membership: Membership, form: AgentForm, **extra: Any
) -> dict[str, Any]:
    return {
        "workspace": membership.workspace,
        "membership": membership,
        "form": form,
        "policies": policy_options(),
        "back_task": _back_to_task(request, membership.workspace_id),
        **extra,
    }


def _after_save(request: AuthedRequest, agent: Agent, verb: str) -> HttpResponse:
    back = _back_to_task(request, agent.workspace_id)
    where = (
        "; it is on the task page now" if back and agent.tasks.filter(pk=back.pk).exists() else ""
    )
    messages.success(request, f"{agent.name} {verb}{where}.")
    if back is not None:
        return redirect("tasks:detail", task_id=back.pk)
    return redirect("agents:manage", workspace_id=agent.workspace_id)


@login_required
def manage_agents(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = get_membership(request.user, workspace_id)
    form = AgentForm(request.POST or None, workspace_id=workspace_id)
    status = 200
    if request.method == "POST":
        agent = _save_agent(
            form, lambda **fields: agent_changes.create_agent(membership=membership, **fields)
        )
        if agent is not None:
            return _after_save(request, agent, "was created")
        status = 400
    return _manage_page(request, membership, form, status=status)


def _manage_page(
    request: AuthedRequest,
    membership: Membership,
    form: AgentForm,
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    extra.setdefault("outside_form", OutsideAgentForm(prefix="outside"))
    agents = selectors.list_workspace_agents(membership)
    return render(
        request,
        "agents/manage.html",
        _agent_page_context(request, membership, form, agents=agents, **extra),
        status=status,
    )


@login_required
@require_POST
def create_outside_agent(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    """The agents page's "Outside agent" form (owners; the service checks). The answer is the
    page itself, with the agent's token and signing secret shown this once: never redirected
    to, so they are in no URL and no later page."""
    membership = get_membership(request.user, workspace_id)
    if not membership.is_owner:
        raise PermissionDenied("Only owners manage agents.")
    form = OutsideAgentForm(request.POST, prefix="outside")
    made = None
    if form.is_valid():
        try:
            made = outside_services.create_outside_agent(membership=membership, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
    agent_form = AgentForm(workspace_id=workspace_id)
    if made is None:
        return _manage_page(request, membership, agent_form, status=400, outside_form=form)
    return _manage_page(request, membership, agent_form, outside_made=made)


@login_required
def edit_agent(request: AuthedRequest, workspace_id: int, agent_id: int) -> HttpResponse:
    membership = get_membership(request.user, workspace_id)
    agent = selectors.get_workspace_agent(membership, agent_id)
    form = AgentForm(request.POST or None, instance=agent)
    status = 200
    if request.method == "POST":
        # The form already wrote its fields onto ``agent``; the service checks and saves.
        saved = _save_agent(
            form,
            lambda **fields: agent_changes.update_agent(
                membership=membership, agent=agent, **fields
            ),
        )
        if saved is not None:
            return _after_save(request, saved, "was saved")
        status = 400
    return render(
        request,
        "agents/edit.html",
        _agent_page_context(request, membership, form, agent=agent),
        status=status,
    )


# --- Models (site administrators) -------------------------------------------------------------


def _require_staff(request: AuthedRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied("Only site administrators manage models.")


def _agents_words(chosen: int, by_default: int) -> str:
    """The Models page's Agents column: agents that chose the model, and those that use it as
    the site's default (every agent without a model of its own)."""
    if not chosen and not by_default:
        return "none"
    if not by_default:
        return str(chosen)
    if not chosen:
        return f"{by_default}, all by default"
    return f"{chosen + by_default}, {by_default} of them by default"


def _models_context(form: ModelProfileForm, **extra: Any) -> dict[str, Any]:
    default = profiles.site_default()
    by_default = Agent.objects.filter(model_profile__isnull=True).count()
    rows = [
        {
            "profile": p,
            "words": profiles.describe(p),
            "key_set": bool(p.api_key_env and env_str(p.api_key_env)),
            "agents": _agents_words(p.agent_count, by_default if p.is_default else 0),
        }
        for p in ModelProfile.objects.annotate(agent_count=Count("agents")).order_by("name")
    ]
    return {
        "rows": rows,
        "default": default,
        "builtin": llm.embedded_profile(),
        "builtin_agents": _agents_words(0, 0 if default else by_default),
        "form": form,
        **extra,
    }


@login_required
def models_page(request: AuthedRequest) -> HttpResponse:
    """The Models page: the site's models, a Test button each, the default, and a form to add
    one."""
    _require_staff(request)
    form = ModelProfileForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            profile = form.save()
            messages.success(
                request, f"{profile.name} was added: test it, then make it the default."
            )
            return redirect("agents:models")
        status = 400
    return render(request, "agents/models.html", _models_context(form), status=status)


@login_required
def edit_model(request: AuthedRequest, profile_id: int) -> HttpResponse:
    _require_staff(request)
    profile = get_object_or_404(ModelProfile, pk=profile_id)
    form = ModelProfileForm(request.POST or None, instance=profile)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            form.save()
            messages.success(request, f"{profile.name} was saved.")
            return redirect("agents:models")
        status = 400
    return render(
        request, "agents/model_edit.html", {"form": form, "profile": profile}, status=status
    )


@login_required
@require_POST
def test_model(request: AuthedRequest, profile_id: int) -> HttpResponse:
    """The Test button: one real call (0: the built-in model), its answer or exact error."""
    _require_staff(request)
    if profile_id == 0:
        profile = llm.embedded_profile()
    else:
        profile = get_object_or_404(ModelProfile, pk=profile_id)
    result = profiles.test_profile(profile)
    context = {"result": result, "profile": profile, "profile_key": profile_id}
    if request.htmx:
        return render(request, "agents/models.html#test-result", context)
    return render(
        request, "agents/models.html", _models_context(ModelProfileForm(), tested=context)
    )


@login_required
@require_POST
def make_default_model(request: AuthedRequest, profile_id: int) -> HttpResponse:
    """Make a model the site's default (0: the built-in model)."""
    _require_staff(request)
    profile = None if profile_id == 0 else get_object_or_404(ModelProfile, pk=profile_id)
    profiles.set_default(profile)
    name = profile.name if profile else "The built-in small model"
    messages.success(request, f"{name} is the site's default model now.")
    return redirect("agents:models")


@login_required
@require_POST
def feedback(request: AuthedRequest, task_id: int, kind: str, target_id: int) -> HttpResponse:
    """Thumbs, comment or "unnecessary" on one piece of agent work (any member, viewers too).
    htmx gets the person's widget back; every page's counts follow over the WebSocket."""
    access = get_task_access(request.user, task_id)
    target = selectors.get_feedback_target(access, kind, target_id)
    form = FeedbackForm(request.POST)
    if not form.is_valid():
        reasons = [f"{name}: {' '.join(map(str, errs))}" for name, errs in form.errors.items()]
        return bad_request(" ".join(reasons))
    try:
        feedback_services.record_feedback(
            membership=access.membership, target=target, **form.service_arguments()
        )
    except ValidationError as exc:
        return bad_request(exc)
    if not request.htmx:
        return redirect("tasks:detail", task_id=task_id)
    widget = selectors.feedback_widget(
        user=request.user, kind=kind, target_id=target_id, task_id=task_id
    )
    return render(request, "agents/_feedback.html#feedback-widget", {"fb": widget})


@login_required
@require_POST
def plan_tick(request: AuthedRequest, task_id: int, step_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    step = selectors.get_task_plan_step(access, step_id)
    done = request.POST.get("done", "")
    if done not in ("0", "1"):
        return bad_request("Say done=1 or done=0.")
    return _run(
        request,
        task_id,
        lambda: plan_services.tick_step(membership=access.membership, step=step, done=done == "1"),
    )


@login_required
@require_POST
def plan_assign(request: AuthedRequest, task_id: int, step_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    step = selectors.get_task_plan_step(access, step_id)
    assignee = request.POST.get("assignee", "")
    if len(assignee) > 40:
        return bad_request("Choose an agent of the task or a member.")
    return _run(
        request,
        task_id,
        lambda: plan_services.reassign_step(
            membership=access.membership, step=step, assignee=assignee
        ),
    )
