"""Where a model's base URL may point: http(s) only; never link-local or cloud metadata
addresses in any spelling; loopback (a local Ollama) and private ranges as MODEL_BASE_URL_ALLOW
says, never the database's or Redis' port; and the address is checked again when a client
connects, so a name cannot be re-pointed after it was saved."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from langchain_core.messages import HumanMessage

from agents import llm
from agents.llm.endpoints import EndpointRefused, base_url_refusal
from agents.llm.guarded_http import guarded_client
from agents.models import ModelProfile, Provider

pytestmark = pytest.mark.django_db

REFUSED = "Models may not be reached there"


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user(username="root", password="x", is_staff=True)


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Names (``*.test``) resolving wherever the test says, at the moment of each lookup."""
    answers: dict[str, str] = {}
    real: Callable[..., Any] = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in answers:
            family = socket.AF_INET6 if ":" in answers[host] else socket.AF_INET
            where = (answers[host], int(port or 0), 0, 0)[: 4 if ":" in answers[host] else 2]
            return [(family, socket.SOCK_STREAM, 6, "", where)]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def save(as_user: Any, staff: User, base_url: str) -> Any:
    return as_user(staff).post(
        reverse("agents:models"),
        {
            "name": "Somewhere",
            "provider": "openai",
            "model": "m",
            "base_url": base_url,
            "api_key_env": "",
            "temperature": "0.2",
            "max_tokens": "64",
            "timeout_seconds": "5",
            "price_in_per_1k": "0",
            "price_out_per_1k": "0",
        },
    )


@pytest.mark.parametrize(
    "base_url",
    [
        "ftp://models.example.org/v1",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://[fe80::1]:8080/v1",
        "http://[fd00:ec2::254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.google.internal./",
        "http://127.0.0.1:5432/",
        "http://localhost:6379/",
        "http://10.1.2.3:8000/v1",
        "http://192.168.1.20:11434/v1",
        "http://user:secret@models.example.org/v1",
    ],
)
def test_the_models_page_refuses_a_dangerous_base_url(
    as_user: Any, staff: User, base_url: str
) -> None:
    response = save(as_user, staff, base_url)

    assert response.status_code == 400
    assert response.context["form"].errors["base_url"]
    assert not ModelProfile.objects.exists()


@pytest.mark.parametrize(
    "host",
    ["2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518", "0xa9.254.0251.254"],
)
def test_every_spelling_of_the_metadata_address_is_refused(
    as_user: Any, staff: User, host: str
) -> None:
    # Django's URL check lets some of these through and refuses others; none may be saved, and
    # the check itself reads each as the C library (and so a connection) would.
    assert base_url_refusal(f"http://{host}/") is not None
    assert save(as_user, staff, f"http://{host}/").status_code == 400


def test_a_name_that_resolves_to_the_metadata_address_is_refused(
    as_user: Any, staff: User, dns: dict[str, str]
) -> None:
    dns["169.254.169.254.nip.test"] = "169.254.169.254"

    response = save(as_user, staff, "http://169.254.169.254.nip.test/v1")

    assert response.status_code == 400
    assert REFUSED in response.context["form"].errors["base_url"][0]
    assert (
        "resolves to 169.254.169.254, a cloud metadata address"
        in (response.context["form"].errors["base_url"][0])
    )


def test_a_local_server_on_loopback_is_allowed_by_default(as_user: Any, staff: User) -> None:
    assert save(as_user, staff, "http://127.0.0.1:11434/v1").status_code == 302
    assert ModelProfile.objects.get().base_url == "http://127.0.0.1:11434/v1"


def test_private_ranges_are_allowed_where_the_setting_says(
    as_user: Any, staff: User, settings: Any
) -> None:
    settings.MODEL_BASE_URL_ALLOW = ("loopback", "private")

    assert save(as_user, staff, "http://10.1.2.3:8000/v1").status_code == 302
    assert save(as_user, staff, "http://169.254.169.254/").status_code == 400  # never
    assert save(as_user, staff, "http://127.0.0.1:5432/").status_code == 400  # never


def test_loopback_is_refused_where_the_setting_leaves_it_out(
    as_user: Any, staff: User, settings: Any
) -> None:
    settings.MODEL_BASE_URL_ALLOW = ("none",)

    response = save(as_user, staff, "http://127.0.0.1:11434/v1")

    assert response.status_code == 400
    assert "MODEL_BASE_URL_ALLOW" in response.context["form"].errors["base_url"][0]


@pytest.fixture
def web_server() -> Iterator[int]:
    """A plain HTTP server on 127.0.0.1 answering every GET with the Host it was sent."""

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = str(self.headers.get("Host")).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_the_client_connects_to_the_address_it_checked_keeping_the_host_name(
    web_server: int, dns: dict[str, str]
) -> None:
    dns["models.test"] = "127.0.0.1"

    with guarded_client(timeout=5) as client:
        answer = client.get(f"http://models.test:{web_server}/v1/models")

    assert answer.text == f"models.test:{web_server}"


def test_a_name_re_pointed_after_it_was_saved_is_refused_when_connecting(
    as_user: Any, staff: User, web_server: int, dns: dict[str, str], monkeypatch: Any
) -> None:
    dns["models.test"] = "127.0.0.1"
    assert save(as_user, staff, f"http://models.test:{web_server}/v1").status_code == 302
    profile = ModelProfile.objects.get()
    dns["models.test"] = "169.254.169.254"  # the name now points at the metadata service
    connected: list[Any] = []
    real_connect = socket.create_connection
    monkeypatch.setattr(
        socket, "create_connection", lambda *a, **k: connected.append(a) or real_connect(*a, **k)
    )

    with pytest.raises(llm.ModelConfigError, match=r"Refused to connect.*metadata"):
        list(llm.stream_model(llm.build_chat_model(profile), [HumanMessage(content="hi")]))
    assert connected == []


def test_a_connection_to_the_database_or_redis_port_is_refused_whatever_the_name(
    dns: dict[str, str],
) -> None:
    dns["db.test"] = "127.0.0.1"

    with guarded_client(timeout=5) as client, pytest.raises(EndpointRefused, match="6379"):
        client.get("http://db.test:6379/")


def test_a_profile_pointing_at_loopback_needs_the_setting_at_connect_time_too(
    web_server: int, settings: Any
) -> None:
    profile = ModelProfile(
        name="Old", provider=Provider.OPENAI, model="m", base_url=f"http://127.0.0.1:{web_server}"
    )
    settings.MODEL_BASE_URL_ALLOW = ("none",)

    with pytest.raises(llm.ModelConfigError, match="loopback"):
        list(llm.stream_model(llm.build_chat_model(profile), [HumanMessage(content="hi")]))
    with guarded_client(timeout=5) as client, pytest.raises(EndpointRefused):
        client.get(f"http://127.0.0.1:{web_server}/")
    assert httpx.get(f"http://127.0.0.1:{web_server}/").status_code == 200  # it does listen
