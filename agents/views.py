"""Thin views for the agents pane and the agent management page.

Buttons post with htmx and get 204: the result reaches every open page (this one included)
over the task's WebSocket. Without JavaScript they redirect back to the task.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from agents import selectors, services
from agents.forms import AcceptForm, AgentForm, AnswerForm, AskForm, FeedbackForm
from collab.lib.requests import AuthedRequest
from collab.tasks.selectors import get_task_access
from collab.workspaces.selectors import get_membership


def _done(request: AuthedRequest, task_id: int) -> HttpResponse:
    if request.htmx:
        return HttpResponse(status=204)
    return redirect("tasks:detail", task_id=task_id)


def _bad(exc: ValidationError | str) -> HttpResponse:
    text = " ".join(exc.messages) if isinstance(exc, ValidationError) else exc
    return HttpResponse(text, status=400, content_type="text/plain")


def _run(request: AuthedRequest, task_id: int, action: Callable[[], object]) -> HttpResponse:
    try:
        action()
    except ValidationError as exc:
        return _bad(exc)
    return _done(request, task_id)


@login_required
@require_POST
def ask(request: AuthedRequest, task_id: int, agent_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    agent = selectors.get_workspace_agent(access.membership, agent_id)
    form = AskForm(request.POST)
    if not form.is_valid():
        return _bad("Keep the request under 1,500 characters.")
    return _run(
        request,
        task_id,
        lambda: services.ask_agent(
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
        request, task_id, lambda: services.cancel_turn(membership=access.membership, turn=turn)
    )


@login_required
@require_POST
def accept(request: AuthedRequest, task_id: int, suggestion_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    suggestion = selectors.get_task_suggestion(access, suggestion_id)
    form = AcceptForm(request.POST)
    if not form.is_valid():
        return _bad("That change is too long.")
    text = form.cleaned_data["text"] if form.cleaned_data["edited"] else None
    return _run(
        request,
        task_id,
        lambda: services.accept_suggestion(
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
        lambda: services.reject_suggestion(membership=access.membership, suggestion=suggestion),
    )


@login_required
@require_POST
def answer(request: AuthedRequest, task_id: int, question_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    question = selectors.get_task_question(access, question_id)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        return _bad("Write an answer of at most 1,500 characters.")
    return _run(
        request,
        task_id,
        lambda: services.answer_question(
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
        lambda: services.undo_assumption(membership=access.membership, assumption=assumption),
    )


@login_required
@require_POST
def add_to_task(request: AuthedRequest, task_id: int) -> HttpResponse:
    access = get_task_access(request.user, task_id)
    try:
        agent_id = int(request.POST["agent"])
    except (KeyError, ValueError):
        return _bad("Choose an agent.")
    agent = selectors.get_workspace_agent(access.membership, agent_id)
    services.add_agent_to_task(membership=access.membership, agent=agent, task=access.task)
    return _done(request, task_id)  # open pages get the agent's card live


def _save_agent(request: AuthedRequest, form: AgentForm, save: Callable[..., object]) -> bool:
    if not form.is_valid():
        return False
    try:
        save(**form.cleaned_data)
    except ValidationError as exc:
        form.add_error(None, exc)
        return False
    return True


@login_required
def manage_agents(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = get_membership(request.user, workspace_id)
    form = AgentForm(request.POST or None)
    status = 200
    if request.method == "POST":
        data_ok = _save_agent(
            request,
            form,
            lambda **fields: services.create_agent(membership=membership, **fields),
        )
        if data_ok:
            return redirect("agents:manage", workspace_id=workspace_id)
        status = 400
    return render(
        request,
        "agents/manage.html",
        {
            "workspace": membership.workspace,
            "membership": membership,
            "agents": selectors.list_workspace_agents(membership),
            "form": form,
        },
        status=status,
    )


@login_required
def edit_agent(request: AuthedRequest, workspace_id: int, agent_id: int) -> HttpResponse:
    membership = get_membership(request.user, workspace_id)
    agent = selectors.get_workspace_agent(membership, agent_id)
    form = AgentForm(request.POST or None, instance=agent)
    status = 200
    if request.method == "POST":
        # The form already wrote its fields onto ``agent``; the service checks and saves.
        if _save_agent(
            request,
            form,
            lambda **fields: services.update_agent(membership=membership, agent=agent, **fields),
        ):
            return redirect("agents:manage", workspace_id=workspace_id)
        status = 400
    return render(
        request,
        "agents/edit.html",
        {"workspace": membership.workspace, "membership": membership, "agent": agent, "form": form},
        status=status,
    )


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
        return _bad(" ".join(reasons))
    try:
        services.record_feedback(
            membership=access.membership, target=target, **form.service_arguments()
        )
    except ValidationError as exc:
        return _bad(exc)
    if not request.htmx:
        return redirect("tasks:detail", task_id=task_id)
    widget = selectors.feedback_widget(
        user=request.user, kind=kind, target_id=target_id, task_id=task_id
    )
    return render(request, "agents/_feedback.html#feedback-widget", {"fb": widget})
