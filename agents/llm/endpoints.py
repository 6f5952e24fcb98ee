"""Which addresses a model's base URL may reach: checked when the Models page saves one, and
again, on the address actually connected to, each time a client connects (so a name that
resolved somewhere harmless when it was saved cannot be swapped for another address later).

- http and https only;
- never link-local addresses (169.254.0.0/16, fe80::/10) or cloud metadata services
  (169.254.169.254 in any spelling: decimal, hex, octal, IPv4-mapped IPv6;
  ``metadata.google.internal`` and names that resolve to such an address), nor unspecified,
  multicast or reserved addresses;
- loopback (a local Ollama or llama.cpp server) and private ranges only where
  ``MODEL_BASE_URL_ALLOW`` names them (default ``loopback``), and never the database's or
  Redis' port on loopback.

Addresses are classified with the standard library's ``ipaddress``; numeric host spellings are
read the way the C library reads them (``inet_aton``), the way a connection would.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from agents.llm.errors import ModelConfigError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWABLE = ("loopback", "private")
# Metadata services answer on these addresses (AWS, GCP, Azure, OpenStack: 169.254.169.254;
# AWS ECS: 169.254.170.2; AWS IPv6: fd00:ec2::254; Alibaba: 100.100.100.200).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data", "metadata.azure"}
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class EndpointRefused(ModelConfigError):
    """A model's base URL names, or its name resolved to, an address models may not reach."""


@dataclass(frozen=True)
class EndpointRules:
    allow_loopback: bool
    allow_private: bool
    service_ports: frozenset[int]  # the database's and Redis' ports: refused on loopback

    @classmethod
    def from_settings(cls) -> EndpointRules:
        allowed = set(getattr(settings, "MODEL_BASE_URL_ALLOW", ("loopback",)))
        return cls(
            allow_loopback="loopback" in allowed,
            allow_private="private" in allowed,
            service_ports=frozenset(_service_ports()),
        )


def _service_ports() -> set[int]:
    """The ports of this site's own database and Redis (and their defaults)."""
    ports = {5432, 6379}
    for database in settings.DATABASES.values():
        if str(database.get("PORT") or "").isdigit():
            ports.add(int(database["PORT"]))
    redis_url = getattr(settings, "REDIS_URL", None)
    if redis_url:
        try:
            port = urlsplit(redis_url).port
        except ValueError:
            port = None
        if port:
            ports.add(port)
    return ports


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to the same host (mapped, 6to4, NAT64)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_refusal(address: IPAddress, port: int, rules: EndpointRules) -> str | None:
    """What ``address``:``port`` is that a model may not be reached there ("a link-local
    address"), or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            reason = address_refusal(inner, port, rules)
            return None if reason is None else f"{inner} in IPv6 form, {reason}"
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified or address.is_multicast:
        return "not an address a server answers on"
    if address.is_loopback:
        if port in rules.service_ports:
            return f"this host, and port {port} is the database's or Redis'"
        if not rules.allow_loopback:
            return "this host (loopback), which MODEL_BASE_URL_ALLOW leaves out"
        return None
    if address.is_global:
        return None
    if address.is_reserved:
        return "a reserved address"
    if not rules.allow_private:
        return "a private address, which MODEL_BASE_URL_ALLOW leaves out"
    return None


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address if it is one in any spelling a connection accepts
    (``2852039166``, ``0xa9fea9fe``, ``0251.0376.0251.0376``, ``[::ffff:a9fe:a9fe]``)."""
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefx." for c in host.lower()):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to now (empty when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    found: list[IPAddress] = []
    for info in infos:
        text = str(info[4][0]).split("%")[0]
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if address not in found:
            found.append(address)
    return found


def _refusal_for_host(
    host: str, port: int, rules: EndpointRules, addresses: Iterable[IPAddress]
) -> str | None:
    name = host.lower().rstrip(".")
    if name in METADATA_NAMES or name.endswith(".metadata.google.internal"):
        return f"{host} is a cloud metadata service"
    for address in addresses:
        reason = address_refusal(address, port, rules)
        if reason is not None:
            if literal_address(host) is None:
                return f"{host} resolves to {address}, {reason}"
            embeds = isinstance(address, ipaddress.IPv6Address) and _embedded_ipv4(address)
            if str(address) == name.strip("[]") or embeds:
                return f"{host} is {reason}"
            return f"{host} is {address}, {reason}"  # another spelling of the address
    return None


def base_url_refusal(url: str, rules: EndpointRules | None = None) -> str | None:
    """Why a model's base URL may not be saved, or None. A name is resolved now, and each of
    its addresses checked (one that does not resolve yet is left to the check at connect
    time)."""
    rules = rules or EndpointRules.from_settings()
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return "This is not a valid URL."
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return "Only http:// and https:// URLs are allowed."
    host = parts.hostname or ""
    if not host:
        return "The URL names no host."
    if parts.username is not None or parts.password is not None:
        return "Put no user name or password in the URL: name the key's variable instead."
    port = port or _DEFAULT_PORTS[scheme]
    literal = literal_address(host)
    addresses = [literal] if literal is not None else resolve(host, port)
    reason = _refusal_for_host(host, port, rules, addresses)
    return None if reason is None else f"Models may not be reached there: {reason}."


def validate_base_url(url: str) -> str:
    """``url`` when a model's base URL may be saved as it is (empty: the provider's own),
    else a ``ValidationError`` saying why (the Models page and the admin's form)."""
    reason = base_url_refusal(url) if url else None
    if reason is not None:
        raise ValidationError(reason, code="refused_address")
    return url


def check_connect_address(host: str, port: int, rules: EndpointRules | None = None) -> list[str]:
    """The addresses to connect to for ``host``:``port``, each checked, or
    ``EndpointRefused``: called right before a client connects, with what the name resolves
    to at that moment (the connection then goes to exactly these addresses)."""
    rules = rules or EndpointRules.from_settings()
    literal = literal_address(host)
    addresses = [literal] if literal is not None else resolve(host, port)
    if not addresses:
        raise EndpointRefused(f"The model's host {host} does not resolve.")
    reason = _refusal_for_host(host, port, rules, addresses)
    if reason is not None:
        raise EndpointRefused(f"Refused to connect to the model at {host}:{port}: {reason}.")
    return [str(address) for address in addresses]
