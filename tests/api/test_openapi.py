from __future__ import annotations

from typing import Any

from django.test import Client

EXPECTED_OPERATIONS = {
    ("get", "/api/workspaces"),
    ("get", "/api/workspaces/{workspace_id}/tasks"),
    ("post", "/api/workspaces/{workspace_id}/tasks"),
    ("get", "/api/workspaces/{workspace_id}/instructions"),
    ("put", "/api/workspaces/{workspace_id}/instructions"),
    ("get", "/api/tasks/{task_id}"),
    ("get", "/api/tasks/{task_id}/messages"),
    ("post", "/api/tasks/{task_id}/messages"),
    ("post", "/api/tasks/{task_id}/feedback"),
    ("get", "/api/tasks/{task_id}/questions"),
    ("post", "/api/tasks/{task_id}/questions/{question_id}/answer"),
    ("get", "/api/tasks/{task_id}/suggestions"),
    ("post", "/api/tasks/{task_id}/suggestions/{suggestion_id}/accept"),
    ("post", "/api/tasks/{task_id}/suggestions/{suggestion_id}/reject"),
    ("get", "/api/tasks/{task_id}/document"),
    ("put", "/api/tasks/{task_id}/document"),
    ("get", "/api/tasks/{task_id}/document/versions"),
    ("post", "/api/tasks/{task_id}/document/versions/{version_id}/restore"),
    ("get", "/api/workspaces/{workspace_id}/agents"),
    ("post", "/api/workspaces/{workspace_id}/agents"),
    ("patch", "/api/workspaces/{workspace_id}/agents/{agent_id}"),
    ("post", "/api/workspaces/{workspace_id}/agents/{agent_id}/disable"),
    ("get", "/api/tasks/{task_id}/agents"),
    ("post", "/api/tasks/{task_id}/agents"),
    ("delete", "/api/tasks/{task_id}/agents/{agent_id}"),
    ("get", "/api/tasks/{task_id}/turns"),
    ("get", "/api/tasks/{task_id}/turns/{turn_id}"),
    ("post", "/api/tasks/{task_id}/turns/{turn_id}/cancel"),
    ("get", "/api/workspaces/{workspace_id}/members"),
    ("put", "/api/workspaces/{workspace_id}/members/{member_id}/role"),
    ("delete", "/api/workspaces/{workspace_id}/members/{member_id}"),
    ("get", "/api/workspaces/{workspace_id}/invitations"),
    ("post", "/api/workspaces/{workspace_id}/invitations"),
    ("post", "/api/workspaces/{workspace_id}/invitations/{invitation_id}/revoke"),
    ("get", "/api/memory/items"),
    ("post", "/api/memory/items"),
    ("get", "/api/memory/search"),
    ("put", "/api/memory/items/{item_id}"),
    ("put", "/api/memory/items/{item_id}/pin"),
    ("delete", "/api/memory/items/{item_id}"),
    ("get", "/api/memory/export"),
    ("put", "/api/memory/settings"),
    ("post", "/api/memory/import"),
    ("get", "/api/workspaces/{workspace_id}/review/traces"),
    ("get", "/api/workspaces/{workspace_id}/review/export"),
    ("get", "/api/workspaces/{workspace_id}/review/turns.csv"),
    ("get", "/api/tasks/{task_id}/turns/{turn_id}/trace"),
    ("get", "/api/tasks/{task_id}/review/export"),
    ("get", "/api/review/traces"),
    ("get", "/api/review/export"),
    ("get", "/api/review/turns.csv"),
    ("post", "/api/workspaces/{workspace_id}/outside-agents"),
    ("post", "/api/workspaces/{workspace_id}/outside-agents/{agent_id}/secrets"),
    ("delete", "/api/workspaces/{workspace_id}/outside-agents/{agent_id}/secrets/{secret_id}"),
    ("post", "/api/outside/turns/{turn_id}/activities"),
    ("get", "/api/outside/turns"),
    ("post", "/api/workspaces"),
    ("post", "/api/invitations/accept"),
    ("put", "/api/tasks/{task_id}/status"),
    ("post", "/api/tasks/{task_id}/agents/{agent_id}/ask"),
    ("post", "/api/tasks/{task_id}/edits/{action_id}/undo"),
    ("get", "/api/models"),
    ("post", "/api/tasks/{task_id}/suggestions"),
    ("get", "/api/tasks/{task_id}/plan"),
    ("post", "/api/tasks/{task_id}/plan/steps/{step_id}/tick"),
    ("post", "/api/tasks/{task_id}/plan/steps/{step_id}/assign"),
    ("get", "/api/tasks/{task_id}/assumptions"),
    ("post", "/api/tasks/{task_id}/assumptions/{assumption_id}/undo"),
    ("put", "/api/memory/items/{item_id}/share"),
    ("post", "/api/memory/items/{item_id}/everywhere"),
    ("get", "/api/memory/candidates"),
    ("post", "/api/memory/candidates/{candidate_id}/accept"),
    ("post", "/api/memory/candidates/{candidate_id}/reject"),
    ("post", "/api/memory/forget-everything"),
    ("post", "/api/workspaces/{workspace_id}/leave"),
    ("get", "/api/models/site"),
    ("post", "/api/models"),
    ("patch", "/api/models/{profile_id}"),
    ("post", "/api/models/{profile_id}/test"),
    ("post", "/api/models/{profile_id}/default"),
    ("get", "/api/workspaces/{workspace_id}/review/usage"),
    ("get", "/api/review/usage"),
    ("get", "/api/workspaces/{workspace_id}/review/settings"),
    ("put", "/api/workspaces/{workspace_id}/review/settings"),
    ("get", "/api/evaluation/runs"),
    ("post", "/api/evaluation/runs"),
    ("get", "/api/evaluation/runs/{run_id}"),
    ("get", "/api/memory/items/{item_id}/history"),
    ("get", "/api/workspaces/{workspace_id}/audit"),
    ("get", "/api/audit"),
    ("get", "/api/tokens"),
    ("post", "/api/tokens"),
    ("post", "/api/tokens/{token_id}/revoke"),
}


def test_openapi_schema_lists_every_endpoint(db: None) -> None:
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    operations = {(method, path) for path, methods in schema["paths"].items() for method in methods}
    assert operations == EXPECTED_OPERATIONS


def test_openapi_schema_declares_bearer_auth_on_every_operation(db: None) -> None:
    schema = Client().get("/api/openapi.json").json()
    assert schema["components"]["securitySchemes"]["BearerToken"] == {
        "type": "http",
        "scheme": "bearer",
    }
    for path, methods in schema["paths"].items():
        for operation in methods.values():
            if path.startswith("/api/outside/"):  # an outside program: its agent's token
                assert operation["security"]
                continue
            assert {"BearerToken": []} in operation["security"]


def test_openapi_schema_documents_the_error_shape(db: None) -> None:
    schema = Client().get("/api/openapi.json").json()
    post = schema["paths"]["/api/tasks/{task_id}/messages"]["post"]
    assert set(post["responses"]) >= {"201", "400", "401", "403", "404"}
    assert set(schema["components"]["schemas"]["BadRequest"]["properties"]) == {
        "detail",
        "errors",
    }


def _operations(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    ]


def test_every_operation_is_summarised_and_every_body_has_an_example(db: None) -> None:
    schema = Client().get("/api/openapi.json").json()
    components = schema["components"]["schemas"]
    for name, operation in _operations(schema):
        assert operation.get("summary"), name
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            reference = body["schema"]["$ref"].rsplit("/", 1)[-1]
            assert "example" in components[reference], name


def test_operations_that_can_conflict_document_409(db: None) -> None:
    schema = Client().get("/api/openapi.json").json()
    conflicting = {
        name for name, operation in _operations(schema) if "409" in operation["responses"]
    }
    assert conflicting >= {
        "POST /api/tasks/{task_id}/questions/{question_id}/answer",
        "POST /api/tasks/{task_id}/suggestions/{suggestion_id}/accept",
        "POST /api/tasks/{task_id}/suggestions/{suggestion_id}/reject",
        "PUT /api/tasks/{task_id}/document",
        "POST /api/tasks/{task_id}/assumptions/{assumption_id}/undo",
        "POST /api/memory/candidates/{candidate_id}/accept",
        "POST /api/memory/candidates/{candidate_id}/reject",
        "PUT /api/memory/items/{item_id}/share",
    }


def test_docs_page_loads_its_assets_locally(db: None) -> None:
    response = Client().get("/api/docs")
    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in page
    assert "https://" not in page
    assert '"validatorUrl": null' in page


def test_docs_assets_are_served(db: None) -> None:
    response = Client().get("/static/ninja/swagger-ui-init.js")
    try:
        assert response.status_code == 200
        assert b"SwaggerUIBundle" in b"".join(response.streaming_content)
    finally:
        response.close()
