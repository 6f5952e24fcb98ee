"""Schemathesis over every operation of the API's own OpenAPI schema, as an authenticated
member (an owner's token): valid and invalid requests (negative mode: wrong types, missing
fields, odd strings), on the workspace and task that exist and on ids that do not. No request
may answer a server error (5xx) or raise. A bigger run against a real server:
``bench/api_fuzz.py``."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.test import Client
from hypothesis import HealthCheck, given, settings, strategies
from schemathesis import GenerationMode

from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests.api.conftest import token_for
from tests.api.test_openapi import EXPECTED_OPERATIONS

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(600)]

EXAMPLES = 40  # per operation and mode


def _send(client: Client, case: Any) -> int:
    kwargs = case.as_transport_kwargs(base_url="http://testserver")
    method = kwargs["method"].lower()
    url = kwargs["url"].removeprefix("http://testserver")
    headers = {
        key: value for key, value in (kwargs.get("headers") or {}).items() if key != "Authorization"
    }
    content_type = headers.pop("Content-Type", "application/json")
    if "json" in kwargs:
        body: bytes | str = json.dumps(kwargs["json"])
    else:
        body = kwargs.get("data") or b""
    response = client.generic(
        method.upper(),
        url,
        data=body,
        content_type=content_type,
        headers=headers,
        QUERY_STRING=urlencode(kwargs.get("params") or {}, doseq=True),
    )
    return response.status_code


def _fuzz_operation(
    client: Client,
    ids: dict[str, int],
    operation: Any,
    mode: GenerationMode,
    examples: int,
    errors: list[str],
) -> int:
    name = f"{operation.method.upper()} {operation.path}"
    count = 0

    @given(case=operation.as_strategy(generation_mode=mode), real=strategies.booleans())
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any, real: bool) -> None:
        nonlocal count
        if real and case.path_parameters:
            case.path_parameters = {
                key: ids.get(key, value) for key, value in case.path_parameters.items()
            }
        count += 1
        try:
            status = _send(client, case)
        except Exception as exc:
            errors.append(f"{name} raised {exc!r}: {case.as_transport_kwargs()}")
            return
        if status >= 500:
            errors.append(f"{name} answered {status}: {case.as_transport_kwargs()}")

    run()
    return count


def fuzz(
    client: Client, ids: dict[str, int], examples: int
) -> tuple[int, list[str], dict[str, int]]:
    """Cases run, the server errors found, and the cases per operation."""
    schema = schemathesis.openapi.from_dict(client.get("/api/openapi.json").json())
    errors: list[str] = []
    per_operation: dict[str, int] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    # Revoking a token may hit the fuzzer's own (ids are small numbers): fuzz it last, so
    # that every other operation is tried with a working token.
    operations.sort(
        key=lambda operation: operation.path.endswith("/revoke") and "tokens" in operation.path
    )
    for operation in operations:
        name = f"{operation.method.upper()} {operation.path}"
        per_operation[name] = sum(
            _fuzz_operation(client, ids, operation, mode, examples, errors)
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        )
    return sum(per_operation.values()), errors, per_operation


def test_no_operation_answers_a_server_error_to_a_member(
    alice: User, workspace: Workspace, task: Task
) -> None:
    client = Client(headers={"Authorization": f"Bearer {token_for(alice)}"})
    ids = {"workspace_id": workspace.pk, "task_id": task.pk}

    cases, errors, per_operation = fuzz(client, ids, EXAMPLES)

    assert errors == []
    assert len(per_operation) == len(EXPECTED_OPERATIONS)
    assert all(count >= EXAMPLES for count in per_operation.values()), per_operation
    assert cases >= len(EXPECTED_OPERATIONS) * EXAMPLES


HUGE = 2**70  # beyond a 64-bit id: once an OverflowError (SQLite) / out-of-range (PostgreSQL)


@pytest.mark.parametrize(
    ("method", "url", "payload"),
    [
        ("get", "/api/workspaces/{huge}/tasks", None),
        ("post", "/api/workspaces/{huge}/tasks", {"title": "x"}),
        ("get", "/api/workspaces/{huge}/instructions", None),
        ("put", "/api/workspaces/{huge}/instructions", {"instructions": "x"}),
        ("get", "/api/tasks/{huge}", None),
        ("get", "/api/tasks/{huge}/messages", None),
        ("get", "/api/tasks/{task}/messages?before={huge}", None),
        ("post", "/api/tasks/{huge}/messages", {"body": "x"}),
        ("get", "/api/tasks/{task}/questions?before={huge}", None),
        ("post", "/api/tasks/{task}/questions/{huge}/answer", {"answer": "x"}),
        ("post", "/api/tasks/{task}/suggestions/{huge}/reject", None),
        ("put", "/api/tasks/{task}/document", {"text": "x", "base_version": HUGE}),
        ("post", "/api/tasks/{task}/document/versions/{huge}/restore", None),
        ("patch", "/api/workspaces/{huge}/agents/1", {"name": "x"}),
        ("post", "/api/tasks/{task}/agents", {"agent_id": HUGE}),
        ("post", "/api/tasks/{task}/turns/{huge}/cancel", None),
        ("delete", "/api/workspaces/{huge}/members/1", None),
        ("post", "/api/workspaces/{huge}/invitations", {"role": "editor"}),
        ("post", "/api/memory/items", {"text": "x", "workspace_id": HUGE}),
        ("delete", "/api/memory/items/{huge}", None),
        ("post", "/api/tasks/{task}/plan/steps/{huge}/tick", {"done": True}),
        ("post", "/api/tasks/{task}/assumptions/{huge}/undo", None),
        ("put", "/api/memory/items/{huge}/share", {"shared": True}),
        ("post", "/api/memory/candidates/{huge}/accept", None),
        ("post", "/api/workspaces/{huge}/leave", None),
        ("patch", "/api/models/{huge}", {"name": "x"}),
        ("get", "/api/workspaces/{huge}/review/usage", None),
        ("get", "/api/evaluation/runs/{huge}", None),
        (
            "post",
            "/api/tasks/{task}/feedback",
            {"target_kind": "message", "target_id": HUGE, "rating": "up"},
        ),
    ],
)
def test_an_id_beyond_64_bits_answers_400(
    alice: User, task: Task, method: str, url: str, payload: dict[str, Any] | None
) -> None:
    client = Client(headers={"Authorization": f"Bearer {token_for(alice)}"})
    path = url.format(huge=HUGE, task=task.pk)
    response = client.generic(
        method.upper(), path, json.dumps(payload or {}), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert "errors" in response.json()
