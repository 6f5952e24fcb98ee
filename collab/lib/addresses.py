"""The address a request comes from, for the audit log and the throttling of guesses.

``X-Forwarded-For`` is written by whoever sends the request, so it is believed only when the
socket's peer is one of ``TRUSTED_PROXIES`` (addresses or networks). Then the header is read
from the right: each proxy appends the address it was reached from, so the first address that
is not itself a trusted proxy is the client (anything left of it was sent by the client and may
be forged). Without ``TRUSTED_PROXIES`` (the default) the peer counts, whatever the headers say.
Daphne runs without ``--proxy-headers``, so the peer Django sees is the real one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """``["10.0.0.5", "172.16.0.0/12"]`` as networks; ``ImproperlyConfigured`` on a typo."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"TRUSTED_PROXIES: {entry!r} is not an address or a network."
            ) from exc
    return tuple(networks)


@lru_cache(maxsize=8)
def _trusted(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return parse_networks(entries)


def _is_trusted(address: str | None, trusted: tuple[Network, ...]) -> bool:
    if not address or not trusted:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


def client_address(meta: Mapping[str, Any]) -> str | None:
    """The client's address from a request's ``META`` (its peer and ``X-Forwarded-For``)."""
    peer = meta.get("REMOTE_ADDR") or None
    trusted = _trusted(tuple(getattr(settings, "TRUSTED_PROXIES", ())))
    if not _is_trusted(peer, trusted):
        return peer
    hops = [hop.strip() for hop in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer  # a proxy we trust wrote something that is no address: stop there
        if not _is_trusted(hop, trusted):
            return hop
    return peer
