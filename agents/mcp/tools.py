"""What an MCP client may do in Collab, as plain synchronous functions of the caller: each reads
through the permission-checking selectors and writes through the services the pages use, so an
MCP client has exactly its token owner's role (outsiders get "not found", a viewer reads and
nothing more), and every call is audited (``mcp.<tool>``).

The MCP server (agents/mcp/server.py) wraps these for the SDK; nothing here knows about MCP.
Chat and documents returned here are data written by people and agents, never instructions.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404

from agents.memory.selectors import visible_items
from agents.selectors import (
    get_task_question,
    get_task_suggestion,
    get_workspace_agent,
    list_task_suggestions,
)
from agents.services import suggestions as suggestion_services
from agents.services import turns as turn_services
from agents.services.questions import answer_question as answer_question_service
from collab.audit.services import record_event
from collab.lib.errors import Conflict
from collab.tasks import documents
from collab.tasks.models import Document
from collab.tasks.selectors import get_task_access, list_messages, list_tasks
from collab.tasks.services import post_message as post_message_service
from collab.workspaces.selectors import get_membership, list_workspaces_for_user

RECENT_MESSAGES = 30
MEMORY_LIMIT = 100


class ToolError(Exception):
    """A refusal the client is told in plain words (the SDK returns it as a tool error)."""


def _audit(user: User, tool: str, *, workspace: Any = None, target: str = "") -> None:
    record_event(actor=user, action=f"mcp.{tool}", workspace=workspace, target=target)


def _access(user: User, task_id: int) -> Any:
    try:
        return get_task_access(user, int(task_id))
    except (Http404, ValueError, TypeError):
        raise ToolError(f"No task {task_id} that you can see.") from None


def list_my_workspaces(user: User) -> list[dict[str, Any]]:
    _audit(user, "list_workspaces")
    rows = []
    for workspace in list_workspaces_for_user(user):
        membership = get_membership(user, workspace.pk)
        rows.append({"id": workspace.pk, "name": workspace.name, "role": membership.role})
    return rows


def list_workspace_tasks(user: User, workspace_id: int) -> list[dict[str, Any]]:
    try:
        membership = get_membership(user, int(workspace_id))
    except (Http404, ValueError, TypeError):
        raise ToolError(f"No workspace {workspace_id} that you can see.") from None
    _audit(user, "list_tasks", workspace=membership.workspace)
    return [
        {"id": t.pk, "title": t.title, "status": t.status, "goal": t.goal}
        for t in list_tasks(membership.workspace)
    ]


def read_task(user: User, task_id: int) -> dict[str, Any]:
    access = _access(user, task_id)
    task = access.task
    _audit(user, "read_task", workspace=task.workspace, target=f"task:{task.pk}")
    document = Document.objects.only("text").filter(task_id=task.pk).first()
    return {
        "id": task.pk,
        "workspace_id": task.workspace_id,
        "title": task.title,
        "goal": task.goal,
        "status": task.status,
        "your_role": access.membership.role,
        "can_edit": access.can_edit,
        "document": document.text if document else "",
        "recent_chat": recent_chat(access),
    }


def recent_chat(access: Any) -> list[dict[str, Any]]:
    messages = list_messages(access.task, limit=RECENT_MESSAGES)
    return [
        {
            "id": m.pk,
            "author": m.author_name,
            "kind": m.kind,
            "body": m.body,
            "at": m.created_at.isoformat(),
        }
        for m in messages
    ]


def read_document(user: User, task_id: int) -> str:
    access = _access(user, task_id)
    _audit(user, "read_document", workspace=access.task.workspace, target=f"task:{task_id}")
    document = Document.objects.only("text").filter(task_id=access.task.pk).first()
    return document.text if document else ""


def read_chat(user: User, task_id: int) -> list[dict[str, Any]]:
    access = _access(user, task_id)
    _audit(user, "read_chat", workspace=access.task.workspace, target=f"task:{task_id}")
    return recent_chat(access)


def post_message(user: User, task_id: int, body: str) -> dict[str, Any]:
    access = _access(user, task_id)
    try:
        posted = post_message_service(membership=access.membership, task=access.task, body=body)
    except PermissionDenied:
        raise ToolError("Your role in this workspace cannot post in this task.") from None
    except ValidationError as exc:
        raise ToolError(" ".join(exc.messages)) from None
    _audit(user, "post_message", workspace=access.task.workspace, target=f"task:{task_id}")
    return {"id": posted.message.pk, "task_id": access.task.pk, "body": posted.message.body}


def answer_question(user: User, task_id: int, question_id: int, answer: str) -> dict[str, Any]:
    access = _access(user, task_id)
    try:
        question = get_task_question(access, int(question_id))
        question = answer_question_service(
            membership=access.membership, question=question, answer=answer
        )
    except (Http404, ValueError, TypeError):
        raise ToolError(f"No question {question_id} in task {task_id}.") from None
    except PermissionDenied:
        raise ToolError("Your role in this workspace cannot answer questions here.") from None
    except ValidationError as exc:
        raise ToolError(" ".join(exc.messages)) from None
    _audit(user, "answer_question", workspace=access.task.workspace, target=f"task:{task_id}")
    return {"id": question.pk, "status": question.status, "answer": question.answer}


def _agent_to_ask(access: Any, agent_id: int | None) -> Any:
    """The agent named by id (of the caller's workspace), else the task's only agent that can
    be asked; several (or none) are listed so the client can choose."""
    if agent_id is not None:
        try:
            return get_workspace_agent(access.membership, int(agent_id))
        except (Http404, ValueError, TypeError):
            raise ToolError(f"No agent {agent_id} that you can see.") from None
    askable = [a for a in access.task.agents.order_by("name", "id") if a.is_active and a.ask_button]
    if len(askable) == 1:
        return askable[0]
    names = ", ".join(f"{a.name} (agent_id {a.pk})" for a in askable)
    raise ToolError(
        f"Say which agent to ask: {names}." if names else "No agent on this task can be asked."
    )


def ask_question(
    user: User, task_id: int, question: str, agent_id: int | None = None
) -> dict[str, Any]:
    """Ask an agent of the task a question, as its card's Ask button (``ask_agent``): the
    question goes into the chat as the caller's message mentioning the agent, and the agent's
    turn answers it there (or asks back a question card, answered with ``answer_question``)."""
    access = _access(user, task_id)
    if not str(question).strip():
        raise ToolError("Write the question first.")
    agent = _agent_to_ask(access, agent_id)
    try:
        turn = turn_services.ask_agent(
            membership=access.membership, agent=agent, task=access.task, prompt=str(question)
        )
    except (PermissionDenied, ValidationError) as exc:
        raise _refusal(exc, role="ask agents here") from None
    _audit(user, "ask_question", workspace=access.task.workspace, target=f"task:{task_id}")
    message_ids = turn.inputs.get("message_ids") or [None]
    return {
        "turn_id": turn.pk,
        "agent": agent.name,
        "status": turn.status,
        "message_id": message_ids[0],
    }


def read_my_memory(user: User, query: str = "") -> list[dict[str, Any]]:
    """The caller's own memory items (and their workspaces' team items), never anyone else's
    personal ones."""
    _audit(user, "read_my_memory")
    items = visible_items(user).order_by("-pk")
    if query.strip():
        items = items.filter(text__icontains=query.strip()[:200])
    return [
        {"id": i.pk, "text": i.text, "scope": i.scope, "key": i.key, "value": i.value}
        for i in items[:MEMORY_LIMIT]
    ]


def list_open_questions(user: User, task_id: int) -> list[dict[str, Any]]:
    access = _access(user, task_id)
    _audit(user, "list_questions", workspace=access.task.workspace, target=f"task:{task_id}")
    questions = access.task.agent_questions.select_related("agent").order_by("pk")
    return [
        {"id": q.pk, "agent": q.agent.name, "text": q.text, "status": q.status}
        for q in questions
        if q.can_be_answered
    ]


def _refusal(exc: Exception, *, role: str) -> ToolError:
    """A service's refusal in plain words: a conflict says so (read again and redo it)."""
    if isinstance(exc, PermissionDenied):
        return ToolError(f"Your role in this workspace cannot {role}.")
    if isinstance(exc, Conflict):
        return ToolError("Conflict: " + " ".join(exc.messages))
    assert isinstance(exc, ValidationError)
    return ToolError(" ".join(exc.messages))


def read_live_document(user: User, task_id: int) -> dict[str, Any]:
    """The live document with its version: send the version back with an edit."""
    access = _access(user, task_id)
    _audit(user, "read_document", workspace=access.task.workspace, target=f"task:{task_id}")
    read = documents.read_document(task=access.task)
    return {"task_id": access.task.pk, "text": read.text, "version": read.update_id}


def edit_document(user: User, task_id: int, text: str, base_version: int) -> dict[str, Any]:
    """The API's document edit (``edit_document_text``): a minimal change from the version read
    to ``text``, merged with what others wrote since; a conflict when that base is gone."""
    access = _access(user, task_id)
    try:
        edit = documents.edit_document_text(
            membership=access.membership,
            task=access.task,
            new_text=text,
            base_version=int(base_version),
        )
    except (PermissionDenied, ValidationError) as exc:
        raise _refusal(exc, role="edit this document") from None
    _audit(user, "edit_document", workspace=access.task.workspace, target=f"task:{task_id}")
    read = documents.read_document(task=access.task)
    return {"text": read.text, "version": read.update_id, "operations": edit.operations}


def _suggestion_row(suggestion: Any) -> dict[str, Any]:
    return {
        "id": suggestion.pk,
        "by": suggestion.proposer_name,
        "find": suggestion.find,
        "replace": suggestion.replace,
        "rationale": suggestion.rationale,
        "status": suggestion.status,
    }


def list_suggestions(user: User, task_id: int) -> list[dict[str, Any]]:
    access = _access(user, task_id)
    _audit(user, "list_suggestions", workspace=access.task.workspace, target=f"task:{task_id}")
    proposed = list_task_suggestions(access.task, status="proposed").order_by("pk")
    return [_suggestion_row(s) for s in proposed[:MEMORY_LIMIT]]


def propose_suggestion(
    user: User, task_id: int, find: str, replace: str, rationale: str = ""
) -> dict[str, Any]:
    """A change for the people of the task to accept, edit or reject (the agents pane's card)."""
    access = _access(user, task_id)
    try:
        suggestion = suggestion_services.propose_suggestion(
            membership=access.membership,
            task=access.task,
            find=find,
            replace=replace,
            rationale=rationale,
        )
    except (PermissionDenied, ValidationError) as exc:
        raise _refusal(exc, role="propose changes here") from None
    _audit(user, "propose_suggestion", workspace=access.task.workspace, target=f"task:{task_id}")
    return _suggestion_row(suggestion)


def decide_suggestion(
    user: User, task_id: int, suggestion_id: int, *, accept: bool, text: str | None = None
) -> dict[str, Any]:
    """Accept (as proposed, or with ``text`` instead) or reject, as the pane's buttons do."""
    access = _access(user, task_id)
    try:
        suggestion = get_task_suggestion(access, int(suggestion_id))
        if accept:
            suggestion = suggestion_services.accept_suggestion(
                membership=access.membership, suggestion=suggestion, text=text
            )
        else:
            suggestion = suggestion_services.reject_suggestion(
                membership=access.membership, suggestion=suggestion
            )
    except (Http404, ValueError, TypeError):
        raise ToolError(f"No suggestion {suggestion_id} in task {task_id}.") from None
    except (PermissionDenied, ValidationError) as exc:
        raise _refusal(exc, role="decide suggestions here") from None
    tool = "accept_suggestion" if accept else "reject_suggestion"
    _audit(user, tool, workspace=access.task.workspace, target=f"task:{task_id}")
    return _suggestion_row(suggestion)
