"""Which hosts a fetch may reach: the user's `[web]` lists, and never the user's own network.

A page can name any URL, and a redirect can send the fetch anywhere, so every hop is checked
after its host name is resolved: each address it resolves to must be a public one (not loopback,
private, link-local, carrier-grade NAT, multicast, reserved or unspecified, in IPv4 or IPv6,
IPv4-mapped included), and the connection is then made to the address checked, never to a second
lookup (a name that resolves to a public address once and to 127.0.0.1 the next time reaches
nothing). `allow_hosts` (the user's config only) names hosts the user does want reached, private or
not: a host name or an address literal, matched exactly, any port. `deny_hosts` is refused always
and wins over `allow_hosts`; a `.example.com` entry covers every name under it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["HostPolicy", "Refused", "Resolver", "normal_host", "system_resolver"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]
"""host, port -> the addresses it resolves to (as text); raises OSError when it does not."""


class Refused(Exception):
    """The fetch may not go there; the message says why, for the model."""


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def normal_host(host: str) -> str:
    """A host as the lists compare it: lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone id is not part of it
    except ValueError:
        return None


def _public(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return _public(mapped)
    return address.is_global and not address.is_multicast


@dataclass(frozen=True, slots=True)
class HostPolicy:
    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    resolve: Resolver = system_resolver

    @classmethod
    def of(cls, allow: Iterable[str], deny: Iterable[str], resolve: Resolver = system_resolver) -> HostPolicy:
        return cls(
            tuple(normal_host(h) for h in allow if h.strip()),
            tuple(normal_host(h) for h in deny if h.strip()),
            resolve,
        )

    def denied(self, host: str) -> bool:
        name = normal_host(host)
        return any(
            name == d or (d.startswith(".") and (name.endswith(d) or name == d[1:])) for d in self.deny_hosts
        )

    def allowed(self, host: str) -> bool:
        """Listed in allow_hosts (and not denied): reached even when private, and not asked."""
        return normal_host(host) in self.allow_hosts and not self.denied(host)

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for `host`, every one checked; raises `Refused`."""
        name = normal_host(host)
        if not name:
            raise Refused("the URL has no host")
        if self.denied(name):
            raise Refused(f"{name} is in [web] deny_hosts in the user's config")
        literal = _address(name)
        try:
            found = [literal.compressed] if literal is not None else list(self.resolve(name, port))
        except (OSError, UnicodeError) as exc:
            raise Refused(f"{name} could not be resolved ({exc})") from None
        if not found:
            raise Refused(f"{name} resolved to no address")
        if self.allowed(name):
            return found
        for text in found:
            address = _address(text)
            if address is None or not _public(address):
                raise Refused(
                    f"{name} resolves to {text}, a loopback, private or reserved address: the web tool "
                    "does not reach the user's own network unless the user lists the host in [web] "
                    "allow_hosts in their config"
                )
        return found
