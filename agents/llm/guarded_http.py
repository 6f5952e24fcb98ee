"""HTTP clients for model servers that check each address they connect to.

A model's base URL is checked when it is saved (``agents.llm.endpoints``), but a name can
resolve elsewhere later (a short-lived DNS answer, a wildcard alias). These clients resolve the
host themselves at connect time, check every address with the same rules, and connect to exactly
the addresses they checked; TLS still verifies the certificate against the host name. Redirects
open new connections, which are checked the same way. Connections go straight to the model
server (no ``HTTP(S)_PROXY``): a proxy would connect wherever it was told.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio.to_thread
import httpcore
import httpx

from agents.llm.endpoints import EndpointRefused, EndpointRules, check_connect_address


def _first_connected(addresses: list[str], connect: Any) -> Any:
    error: Exception | None = None
    for address in addresses:
        try:
            return connect(address)
        except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
            error = exc
    assert error is not None  # check_connect_address never returns no address
    raise error


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's own sockets, opened only to checked addresses."""

    def __init__(self, rules: EndpointRules) -> None:
        self.rules = rules

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = check_connect_address(host, port, self.rules)
        return _first_connected(
            addresses,
            lambda address: super(GuardedBackend, self).connect_tcp(
                address, port, timeout, local_address, socket_options
            ),
        )

    def connect_unix_socket(self, path: str, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        raise EndpointRefused("Model servers are reached over TCP only.")


class AsyncGuardedBackend(httpcore.AnyIOBackend):
    def __init__(self, rules: EndpointRules) -> None:
        self.rules = rules

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        # Name resolution blocks: in a worker thread, as anyio's own connect does.
        addresses = await anyio.to_thread.run_sync(check_connect_address, host, port, self.rules)
        error: Exception | None = None
        for address in addresses:
            try:
                return await super().connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(
        self, path: str, *args: Any, **kwargs: Any
    ) -> httpcore.AsyncNetworkStream:
        raise EndpointRefused("Model servers are reached over TCP only.")


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport, its connection pool's sockets opened by ``GuardedBackend``."""

    def __init__(self, rules: EndpointRules | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._pool._network_backend = GuardedBackend(rules or EndpointRules.from_settings())


class AsyncGuardedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, rules: EndpointRules | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        backend = AsyncGuardedBackend(rules or EndpointRules.from_settings())
        self._pool._network_backend = backend


# No kept-alive connections: each request connects anew, so every connection is checked, and
# a chat model's client (langchain-openai never closes it) leaves no open socket behind when
# it is dropped. A connection costs little beside a model call.
NO_KEEPALIVE = httpx.Limits(max_keepalive_connections=0)


def guarded_client(*, timeout: float | None) -> httpx.Client:
    return httpx.Client(
        transport=GuardedTransport(limits=NO_KEEPALIVE), timeout=timeout, follow_redirects=True
    )


def guarded_async_client(*, timeout: float | None) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=AsyncGuardedTransport(limits=NO_KEEPALIVE),
        timeout=timeout,
        follow_redirects=True,
    )
