from __future__ import annotations

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
    for methods in schema["paths"].values():
        for operation in methods.values():
            assert {"BearerToken": []} in operation["security"]


def test_openapi_schema_documents_the_error_shape(db: None) -> None:
    schema = Client().get("/api/openapi.json").json()
    post = schema["paths"]["/api/tasks/{task_id}/messages"]["post"]
    assert set(post["responses"]) >= {"201", "400", "401", "403", "404"}
    assert set(schema["components"]["schemas"]["BadRequest"]["properties"]) == {
        "detail",
        "errors",
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
