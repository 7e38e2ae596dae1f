"""Which network addresses ``gth_web_fetch`` may reach, decided on the address it connects to.

A URL names a host; what matters is the address that host resolves to at the moment of the
connection. So the guard resolves every host itself (``getaddrinfo``, which also turns odd numeric
forms such as ``2130706433`` or ``0x7f.1`` into the address they mean), judges each resolved
address with the standard library's ``ipaddress``, and hands the transport the *checked* address to
connect to, keeping the original ``Host`` header and TLS server name. There is no second lookup a
rebinding DNS server could answer differently.

Refused unless the host is opened by ``allowHosts``: loopback, private (RFC 1918, ``fc00::/7``),
link-local (``169.254/16``, ``fe80::/10``), unspecified, multicast, carrier-grade NAT
(``100.64/10``) and every other address that is not globally routable (reserved, documentation,
benchmarking ranges). IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
NAT64, 6to4, Teredo) are judged by the IPv4 address inside. If a host resolves to several
addresses and any one is refused, the host is refused.

``allowHosts`` entries are exact host names or addresses (``intranet.local``, ``10.0.0.5``,
``[::1]``) or ``*.`` suffixes (``*.corp.example`` opens every name below ``corp.example``, not the
name itself).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

__all__ = ["AddressRefused", "GuardedTransport", "HostPolicy", "refusal_rule"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class AddressRefused(Exception):
    """A host the policy refuses; ``host``, ``address`` and ``rule`` say which and why."""

    def __init__(self, host: str, address: str, rule: str) -> None:
        self.host, self.address, self.rule = host, address, rule
        said = host if normalise_host(host) == address else f"{host} resolves to {address}, which"
        super().__init__(f"{said} is a {rule} address")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries, where the network may route it there."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address, which the relay forwards to
    if ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal_rule(address: IPAddress) -> str | None:
    """The name of the rule that refuses ``address``, or ``None`` if it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        inner_rule = refusal_rule(inner) if inner is not None else None
        if inner_rule is not None or address.ipv4_mapped is not None or address in _NAT64:
            return inner_rule  # these forms *are* their IPv4 address; 6to4 and Teredo also route
    # Most specific first, so the message names the rule a reader expects.
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("carrier-grade NAT", isinstance(address, ipaddress.IPv4Address) and address in _CGNAT),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    )
    for rule, hit in checks:
        if hit:
            return rule
    return None if address.is_global else "non-public"


def normalise_host(host: str) -> str:
    """A host as policy compares it: lower case, no brackets, no trailing dot."""
    return host.strip().strip("[]").rstrip(".").lower()


@dataclass(frozen=True)
class HostPolicy:
    """The hosts ``allowHosts`` opens; every other host must resolve to public addresses only."""

    allow_hosts: tuple[str, ...] = ()

    @classmethod
    def of(cls, entries: object) -> HostPolicy:
        """The policy of an ``allowHosts`` value; one string counts as a list of one."""
        items: Iterable[object] = (
            [entries] if isinstance(entries, str) else entries if isinstance(entries, list) else ()
        )
        hosts = (normalise_host(e) for e in items if isinstance(e, str))
        return cls(tuple(h for h in hosts if h))

    def opens(self, host: str) -> bool:
        name = normalise_host(host)
        for entry in self.allow_hosts:
            if entry.startswith("*."):
                if name.endswith(entry[1:]) and len(name) > len(entry) - 1:
                    return True
            elif name == entry:
                return True
        return False

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for ``host``: resolved once, each one checked."""
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(
                normalise_host(host), port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
            )
        except (socket.gaierror, UnicodeError) as exc:
            raise httpx.ConnectError(f"could not resolve host {host}: {exc}") from None
        found: list[str] = []
        for info in infos:
            text = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
            if text not in found:
                found.append(text)
        if not self.opens(host):
            for text in found:
                rule = refusal_rule(ipaddress.ip_address(text))
                if rule is not None:
                    raise AddressRefused(host, text, rule)
        return found


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that connects only to addresses :class:`HostPolicy` checked.

    The request URL is rewritten to the checked address; ``Host`` (set by httpx from the original
    URL) and the TLS server name (the ``sni_hostname`` extension) keep the original host, so
    virtual hosts and certificate checks work as before. Addresses are tried in resolver order.
    """

    def __init__(self, policy: HostPolicy, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.policy = policy
        self.inner = inner or httpx.AsyncHTTPTransport(trust_env=False)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = await self.policy.addresses(host, port)
        if url.scheme == "https" and "sni_hostname" not in request.extensions:
            request.extensions = {**request.extensions, "sni_hostname": host}
        error: httpx.ConnectError | None = None
        for address in addresses:
            request.url = url.copy_with(host=address)
            try:
                return await self.inner.handle_async_request(request)
            except httpx.ConnectError as exc:
                error = exc
        raise error or httpx.ConnectError(f"no address for host {host}")

    async def aclose(self) -> None:
        await self.inner.aclose()
