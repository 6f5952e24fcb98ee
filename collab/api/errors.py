"""One error shape for the whole API.

Every error answers ``{"detail": "<one sentence>"}``; a 400 adds
``"errors": {"<field>": ["<reason>", ...]}`` (``"__all__"`` for reasons about the whole request).
A 409 says the state the request was based on has moved on (``collab.lib.errors.Conflict``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError

from collab.lib.errors import Conflict

_SOURCES = {"body", "query", "path", "header", "cookie", "form", "file"}
BODY_PARAM = "payload"  # every operation names its JSON body parameter this way


def _field_name(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in _SOURCES:
        source = parts.pop(0)
        if source == "body" and parts and parts[0] == BODY_PARAM:
            parts.pop(0)
    return ".".join(str(part) for part in parts) or NON_FIELD_ERRORS


def _bad_request(api: NinjaAPI, request: HttpRequest, errors: dict[str, list[str]]) -> HttpResponse:
    reasons = [
        message if field == NON_FIELD_ERRORS else f"{field}: {message}"
        for field, messages in errors.items()
        for message in messages
    ]
    detail = "; ".join(reasons) or "Invalid request."
    return api.create_response(request, {"detail": detail, "errors": errors}, status=400)


def install_error_handlers(api: NinjaAPI) -> None:
    @api.exception_handler(NinjaValidationError)
    def payload_invalid(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
        errors: dict[str, list[str]] = {}
        for error in exc.errors:
            message = str(error.get("msg", "Invalid value."))
            if error.get("type") == "missing" and list(error.get("loc", [])) == [
                "body",
                BODY_PARAM,
            ]:
                message = "A JSON object body is required."
            errors.setdefault(_field_name(error.get("loc", ())), []).append(message)
        return _bad_request(api, request, errors)

    @api.exception_handler(DjangoValidationError)
    def service_refused(request: HttpRequest, exc: DjangoValidationError) -> HttpResponse:
        if hasattr(exc, "error_dict"):
            errors = {field: list(messages) for field, messages in exc.message_dict.items()}
        else:
            errors = {NON_FIELD_ERRORS: list(exc.messages)}
        return _bad_request(api, request, errors)

    @api.exception_handler(Conflict)
    def conflict(request: HttpRequest, exc: Conflict) -> HttpResponse:
        # Already decided, or based on a state that has moved on: 409, the reason as the detail.
        detail = " ".join(exc.messages) or "The request conflicts with the current state."
        return api.create_response(request, {"detail": detail}, status=409)

    @api.exception_handler(AuthenticationError)
    def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        response = api.create_response(
            request,
            {"detail": "Authentication required: send 'Authorization: Bearer <token>'."},
            status=401,
        )
        response["WWW-Authenticate"] = 'Bearer realm="collab"'
        return response

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        if exc.status_code == 400:
            message = exc.message
            if message.startswith("Cannot parse request body"):
                message = "The request body is not valid JSON."
            return _bad_request(api, request, {NON_FIELD_ERRORS: [message]})
        return api.create_response(request, {"detail": exc.message}, status=exc.status_code)

    @api.exception_handler(PermissionDenied)
    def forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
        detail = str(exc) or "You may not do that."
        return api.create_response(request, {"detail": detail}, status=403)

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return api.create_response(request, {"detail": "Not found."}, status=404)

    @api.exception_handler(RequestDataTooBig)
    def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        return api.create_response(request, {"detail": "Request body too large."}, status=413)


def unknown_path(request: HttpRequest, path: str = "") -> JsonResponse:
    """Any /api/ path no operation serves: the API's 404, not the site's HTML page."""
    return JsonResponse({"detail": "Not found."}, status=404)
