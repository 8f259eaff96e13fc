"""One page over HTTP(S), within limits: the hosts checked at every hop, a size cap, a deadline.

`fetch(url, policy)` follows redirects itself (at most `MAX_REDIRECTS`), so each hop's host goes
through `HostPolicy.addresses` before anything connects to it, and the connection is made to the
address that was checked (the host name kept for the `Host` header and for TLS: the certificate is
still verified against the name). The body is read as it streams, up to `max_bytes` (the rest is
not read: the page says it was cut) and within `timeout` seconds in all, however slowly a server
drips. No proxy from the environment is used: through a proxy, the address checked would not be
the address reached. The client is httpx2, the one the SDKs already bring, imported when a fetch
is made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from agent_cli import __version__
from agent_cli.web.hosts import HostPolicy, Refused

if TYPE_CHECKING:
    import httpx2

__all__ = ["MAX_BYTES", "MAX_REDIRECTS", "TIMEOUT", "USER_AGENT", "FetchError", "Page", "Refused", "fetch"]

MAX_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5
TIMEOUT = 30.0
USER_AGENT = f"agent-cli/{__version__} (web_fetch)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchError(Exception):
    """The page could not be fetched; the message says why, for the model."""


@dataclass(frozen=True, slots=True)
class Page:
    url: str  # where the body came from, after redirects
    status: int
    content_type: str  # the media type, lower case, without parameters
    charset: str | None  # from the Content-Type header, if it names one
    body: bytes
    cut: bool  # the body was longer than the cap: only its start was read


def _target(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(f"only http and https URLs can be fetched, not {scheme or 'a relative URL'}: {url}")
    if parts.username or parts.password:
        raise FetchError("a URL with a user name or password is not fetched")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise FetchError(f"the URL's port is not a number: {url}") from None
    return scheme, parts.hostname or "", port


def fetch(
    url: str,
    policy: HostPolicy,
    *,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
    clock: Callable[[], float] = time.monotonic,
) -> Page:
    """Fetch `url`; raises `Refused` (a host it may not reach) or `FetchError`."""
    import httpx2

    deadline = clock() + timeout
    seen = url
    with httpx2.Client(trust_env=False, follow_redirects=False, timeout=min(timeout, 20.0)) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            response = _get(client, seen, policy, deadline, clock)
            try:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    seen = urljoin(seen, response.headers["location"])
                    continue
                return _read(response, seen, max_bytes, deadline, clock)
            finally:
                response.close()
    raise FetchError(f"more than {MAX_REDIRECTS} redirects from {url}")


def _get(
    client: httpx2.Client, url: str, policy: HostPolicy, deadline: float, clock: Callable[[], float]
) -> httpx2.Response:
    import httpx2

    scheme, host, port = _target(url)
    addresses = policy.addresses(host, port)  # Refused propagates: nothing has connected yet
    parts = urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    authority = host if ":" not in host else f"[{host}]"
    default_port = port == (443 if scheme == "https" else 80)
    host_header = authority if default_port else f"{authority}:{port}"
    last: Exception | None = None
    for address in addresses:
        if clock() >= deadline:
            break
        literal = f"[{address}]" if ":" in address else address
        request = client.build_request(
            "GET",
            f"{scheme}://{literal}:{port}{path}",
            headers={
                "Host": host_header,
                "User-Agent": USER_AGENT,
                "Accept": "text/html, text/*;q=0.9, */*;q=0.5",
            },
            extensions={"sni_hostname": host} if scheme == "https" else {},
        )
        try:
            return client.send(request, stream=True)
        except httpx2.TimeoutException as exc:
            last = exc
        except httpx2.HTTPError as exc:
            last = exc
    if last is None:
        raise FetchError(f"the fetch's time limit passed before {host} answered")
    raise FetchError(f"could not fetch {url}: {type(last).__name__}: {last}")


def _media(content_type: str) -> tuple[str, str | None]:
    media, _, params = content_type.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def _read(
    response: httpx2.Response, url: str, max_bytes: int, deadline: float, clock: Callable[[], float]
) -> Page:
    import httpx2

    chunks: list[bytes] = []
    size = 0
    cut = False
    try:
        for chunk in response.iter_bytes():  # decoded (gzip) as it arrives: a bomb stops at the cap
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                cut = True
                break
            if clock() > deadline:
                raise FetchError(f"the page took longer than the fetch's time limit: {url}")
    except httpx2.HTTPError as exc:
        raise FetchError(f"the page stopped arriving: {type(exc).__name__}: {exc}") from None
    body = b"".join(chunks)[:max_bytes]
    media, charset = _media(response.headers.get("content-type", ""))
    return Page(url, response.status_code, media, charset, body, cut)
