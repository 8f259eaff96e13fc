"""web_fetch: hosts checked at every hop (never the user's own network unless allowed), pages within
limits, HTML as Markdown, the whole page archived and paged by offset, asked per host.

Pages come from a local HTTP server on 127.0.0.1 (the tests never reach the network); the tool is
told the loopback host is allowed where a test needs it to reach that server, and a second server
that counts its connections shows a refused hop is refused before anything connects to it."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_cli.agent.approval_rules import always_rule
from agent_cli.agent.approvals import HeadlessApprover, InteractiveApprover
from agent_cli.store.archive import Archive
from agent_cli.tools.base import ToolContext, ToolOutput, ToolRegistry
from agent_cli.tools.registry import default_tools
from agent_cli.tools.web_fetch import MAX_CHARS, WebFetch
from agent_cli.web.fetch import FetchError, fetch
from agent_cli.web.hosts import HostPolicy, Refused

Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


@dataclass
class Site:
    """A local web server: `pages` by path, each a handler; `hits` counts requests by path."""

    pages: dict[str, Handler] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    hosts: list[str] = field(default_factory=list)
    port: int = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def _serve(site: Site) -> Iterator[Site]:
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.hits[self.path] = site.hits.get(self.path, 0) + 1
            site.hosts.append(self.headers.get("Host", ""))
            page = site.pages.get(self.path)
            if page is None:
                _send(self, 404, "text/html", b"<html><body><p>no such page</p></body></html>")
            else:
                page(self)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


def _send(
    h: http.server.BaseHTTPRequestHandler, status: int, ctype: str, body: bytes, **headers: str
) -> None:
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(body)))
    for k, v in headers.items():
        h.send_header(k.replace("_", "-"), v)
    h.end_headers()
    h.wfile.write(body)


def _page(ctype: str, body: bytes, status: int = 200, **headers: str) -> Handler:
    return lambda h: _send(h, status, ctype, body, **headers)


@pytest.fixture
def site() -> Iterator[Site]:
    yield from _serve(Site())


@pytest.fixture
def other() -> Iterator[Site]:
    yield from _serve(Site())


LOCAL = HostPolicy.of(["127.0.0.1"], [])


def _ctx(tmp_path: Path) -> tuple[ToolContext, Archive]:
    archive = Archive(tmp_path / ".transcripts" / "s1")
    ctx = ToolContext(
        root=tmp_path, save_text=lambda label, text: archive.shown(archive.write_output(label, text))
    )
    return ctx, archive


def _run(tool: WebFetch, args: dict[str, object], ctx: ToolContext) -> ToolOutput:
    return ToolRegistry([tool]).run("web_fetch", args, ctx)  # as the loop runs it: errors as results


# ---- hosts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "224.0.0.1",
    ],
)
def test_an_address_on_the_users_own_network_is_refused(address: str) -> None:
    policy = HostPolicy.of([], [], resolve=lambda host, port: [address])
    with pytest.raises(Refused, match="allow_hosts"):
        policy.addresses("intranet.example", 80)


def test_a_public_address_passes_and_a_name_resolving_to_loopback_does_not() -> None:
    policy = HostPolicy.of([], [], resolve=lambda host, port: ["93.184.216.34"])
    assert policy.addresses("example.com", 443) == ["93.184.216.34"]
    mixed = HostPolicy.of([], [], resolve=lambda host, port: ["93.184.216.34", "127.0.0.1"])
    with pytest.raises(Refused):  # one private address among public ones is enough to refuse
        mixed.addresses("rebind.example", 443)


def test_allow_hosts_lets_a_private_host_through_and_deny_wins() -> None:
    resolve = lambda host, port: ["10.0.0.5"]  # noqa: E731
    assert HostPolicy.of(["wiki.corp"], [], resolve).addresses("WIKI.corp.", 80) == ["10.0.0.5"]
    with pytest.raises(Refused, match="deny_hosts"):
        HostPolicy.of(["wiki.corp"], ["wiki.corp"], resolve).addresses("wiki.corp", 80)
    with pytest.raises(Refused, match="deny_hosts"):
        HostPolicy.of([], [".tracker.test"], resolve).addresses("a.b.tracker.test", 80)


# ---- fetching ------------------------------------------------------------------------------------


def test_a_page_is_markdown_without_its_scripts_styles_and_navigation(site: Site, tmp_path: Path) -> None:
    html = (
        b"<html><head><title>Doc</title><style>.x{color:red}</style><script>steal()</script></head>"
        b"<body><nav><a href='/'>Home</a><a href='/about'>About us</a></nav><h1>Install</h1>"
        b"<p>Run <code>pip install thing</code> \x1b[31mthen</p><script>alert('x')</script></body></html>"
    )
    site.pages["/doc"] = _page("text/html; charset=utf-8", html)
    ctx, _ = _ctx(tmp_path)
    out = _run(WebFetch(LOCAL), {"url": site.url("/doc")}, ctx)
    assert not out.is_error, out.content
    assert "# Install" in out.content and "`pip install thing`" in out.content
    assert "steal()" not in out.content and "alert" not in out.content and "color:red" not in out.content
    assert "About us" not in out.content
    assert "\x1b" not in out.content and "\\x1b[31m" in out.content  # written out, never raw
    assert site.hosts == [f"127.0.0.1:{site.port}"]


def test_a_page_in_another_encoding_reads_right(site: Site, tmp_path: Path) -> None:
    text = "<html><body><p>日本語のページ – naïve café</p></body></html>"
    site.pages["/sjis"] = _page(
        "text/html", b"<meta charset='shift_jis'>" + "<p>日本語のページ</p>".encode("shift_jis")
    )
    site.pages["/latin"] = _page("text/html; charset=ISO-8859-1", "<p>naïve café</p>".encode("latin-1"))
    site.pages["/utf8"] = _page("text/html", text.encode())
    ctx, _ = _ctx(tmp_path)
    tool = WebFetch(LOCAL)
    assert "日本語のページ" in _run(tool, {"url": site.url("/sjis")}, ctx).content
    assert "naïve café" in _run(tool, {"url": site.url("/latin")}, ctx).content
    assert "日本語のページ – naïve café" in _run(tool, {"url": site.url("/utf8")}, ctx).content


def test_a_5_mb_page_gives_40k_characters_pages_by_offset_and_is_archived_whole(
    site: Site, tmp_path: Path
) -> None:
    paragraphs = "".join(f"<p>paragraph {i:06d} {'lorem ipsum ' * 30}</p>" for i in range(14_000))
    body = f"<html><body>{paragraphs}<p>THE-LAST-LINE</p></body></html>".encode()
    assert len(body) > 5_000_000
    site.pages["/big"] = _page("text/html", body)
    ctx, archive = _ctx(tmp_path)
    tool = WebFetch(LOCAL)
    first = _run(tool, {"url": site.url("/big")}, ctx)
    assert not first.is_error
    body_part = first.content.split("\n", 1)[1]
    assert len(body_part) <= MAX_CHARS + 400  # the piece and the line saying what is left
    assert "THE-LAST-LINE" not in first.content
    assert "call web_fetch with offset 40000" in first.content
    saved = list((tmp_path / ".transcripts" / "s1").glob("output-*.txt"))
    assert len(saved) == 1 and "THE-LAST-LINE" in saved[0].read_text()
    assert archive.shown(saved[0]) in first.content
    second = _run(tool, {"url": site.url("/big"), "offset": 40_000}, ctx)
    assert "characters 40,000-80,000" in second.content
    assert site.hits["/big"] == 1  # the second part came from the page kept, not a second fetch
    assert "THE-LAST-LINE" in archive.search("THE-LAST-LINE", 4_000)


def test_a_page_over_the_size_cap_is_cut_and_says_so(site: Site) -> None:
    site.pages["/huge"] = _page("text/plain", b"x" * 300_000)
    page = fetch(site.url("/huge"), LOCAL, max_bytes=100_000)
    assert page.cut and len(page.body) == 100_000


def test_a_gzip_bomb_stops_at_the_cap(site: Site) -> None:
    site.pages["/bomb"] = _page("text/plain", gzip.compress(b"\0" * 50_000_000), Content_Encoding="gzip")
    page = fetch(site.url("/bomb"), LOCAL, max_bytes=1_000_000)
    assert page.cut and len(page.body) == 1_000_000


def test_a_slow_page_ends_at_the_time_limit(site: Site) -> None:
    release = threading.Event()

    def slow(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.end_headers()
        for _ in range(600):  # a byte now and then, never enough to trip a read timeout
            h.wfile.write(b"x")
            h.wfile.flush()
            if release.wait(0.05):
                return

    site.pages["/slow"] = slow
    now = [0.0]

    def clock() -> float:  # each reading moves time on a second: the limit is reached by counting
        now[0] += 1.0
        return now[0]

    try:
        with pytest.raises(FetchError, match="time limit"):
            fetch(site.url("/slow"), LOCAL, timeout=5.0, clock=clock)
    finally:
        release.set()


def test_a_redirect_to_a_private_address_is_refused_before_connecting(
    site: Site, other: Site, tmp_path: Path
) -> None:
    # `other` listens on loopback too, under the name `localhost`, which the user did not allow.
    other.pages["/admin"] = _page("text/plain", b"SECRET-ADMIN-PAGE")
    site.pages["/go"] = _page("text/html", b"", status=302, Location=other.url("/admin", host="localhost"))
    ctx, _ = _ctx(tmp_path)
    out = _run(WebFetch(LOCAL), {"url": site.url("/go")}, ctx)
    assert out.is_error and "not fetched" in out.content and "localhost" in out.content
    assert other.hits == {}  # nothing connected to it
    assert "SECRET-ADMIN-PAGE" not in out.content


def test_redirects_are_followed_within_the_limit(site: Site, tmp_path: Path) -> None:
    site.pages["/a"] = _page("text/html", b"", status=301, Location="/b")
    site.pages["/b"] = _page("text/plain", b"ARRIVED")
    for i in range(7):
        site.pages[f"/loop{i}"] = _page("text/html", b"", status=302, Location=f"/loop{i + 1}")
    ctx, _ = _ctx(tmp_path)
    tool = WebFetch(LOCAL)
    out = _run(tool, {"url": site.url("/a")}, ctx)
    assert "ARRIVED" in out.content and "redirected from" in out.content
    looped = _run(tool, {"url": site.url("/loop0")}, ctx)
    assert looped.is_error and "more than 5 redirects" in looped.content


def test_the_connection_goes_to_the_address_checked(site: Site, tmp_path: Path) -> None:
    # `docs.test` resolves nowhere for the system: the page is reached only because the fetch
    # connects to the address the policy resolved and checked, with the name in the Host header.
    policy = HostPolicy.of(["docs.test"], [], resolve=lambda host, port: ["127.0.0.1"])
    site.pages["/p"] = _page("text/plain", b"PINNED")
    ctx, _ = _ctx(tmp_path)
    out = _run(WebFetch(policy), {"url": f"http://docs.test:{site.port}/p"}, ctx)
    assert "PINNED" in out.content, out.content
    assert site.hosts == [f"docs.test:{site.port}"]


def test_loopback_is_refused_by_default_and_bad_urls_are_tool_errors(site: Site, tmp_path: Path) -> None:
    site.pages["/p"] = _page("text/plain", b"LOCAL-ONLY")
    ctx, _ = _ctx(tmp_path)
    registry = default_tools()
    out = registry.run("web_fetch", {"url": site.url("/p")}, ctx)
    assert out.is_error and "allow_hosts" in out.content and site.hits == {}
    for args, said in [
        ({"url": "file:///etc/passwd"}, "only http and https"),
        ({"url": "http://user:pw@example.com/"}, "user name or password"),
        ({}, "needs a"),
        ({"url": "http://127.0.0.1/", "offset": -1}, "offset"),
    ]:
        bad = registry.run("web_fetch", args, ctx)
        assert bad.is_error and said in bad.content, bad.content


def test_a_binary_page_and_an_error_page(site: Site, tmp_path: Path) -> None:
    site.pages["/img"] = _page("image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    ctx, _ = _ctx(tmp_path)
    tool = WebFetch(LOCAL)
    img = _run(tool, {"url": site.url("/img")}, ctx)
    assert img.is_error and "not a text page (image/png" in img.content
    missing = _run(tool, {"url": site.url("/nowhere")}, ctx)
    assert missing.is_error and "HTTP 404" in missing.content and "no such page" in missing.content


# ---- approval ------------------------------------------------------------------------------------


def test_always_covers_the_host_only() -> None:
    rule = always_rule("web_fetch", {"url": "https://Docs.Python.org/3/library/"}, "host")
    assert rule.covers("web_fetch", {"url": "https://docs.python.org/3/tutorial/"})
    assert rule.covers("web_fetch", {"url": "http://docs.python.org:8080/x"})
    assert not rule.covers("web_fetch", {"url": "https://docs.python.org.evil.test/"})
    assert not rule.covers("web_fetch", {"url": "https://pypi.org/"})
    assert "docs.python.org" in rule.describe()


def test_asked_per_host_and_allow_hosts_runs_unasked() -> None:
    tools = default_tools()
    asked: list[str] = []

    def ask(name: str, args: object, described: str | None) -> str:
        asked.append(str(described))
        return "always"

    approver = InteractiveApprover(
        ask, approval_of=tools.approval, guard=lambda n, a: None, allow_hosts=["wiki.corp"]
    )  # type: ignore[arg-type]
    assert approver.decide("web_fetch", {"url": "https://a.test/1"}).allowed
    assert approver.decide("web_fetch", {"url": "https://a.test/2"}).allowed
    assert approver.decide("web_fetch", {"url": "https://b.test/"}).allowed
    assert approver.decide("web_fetch", {"url": "https://wiki.corp/page"}).allowed
    assert len(asked) == 2 and "a.test" in asked[0] and "b.test" in asked[1]
    headless = HeadlessApprover(
        approval_of=tools.approval, guard=lambda n, a: None, allow_hosts=["wiki.corp"]
    )
    assert headless.decide("web_fetch", {"url": "https://wiki.corp/x"}).allowed
    refused = headless.decide("web_fetch", {"url": "https://a.test/"})
    assert not refused.allowed and "allow_hosts" in refused.reason and "a.test" in refused.reason


# ---- end to end: `agent -p` against the fake model server ---------------------------------------


def _agent_fetch(tmp_path: Path, url: str, *flags: str, user_config: str = "", project_config: str = ""):  # type: ignore[no-untyped-def]
    from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
    from tests.e2e import agent_env, run_agent, tool_results

    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir(exist_ok=True)
    if user_config:
        (home / ".config" / "agent-cli").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "agent-cli" / "config.toml").write_text(user_config)
    if project_config:
        (project / ".agent").mkdir(exist_ok=True)
        (project / ".agent" / "config.toml").write_text(project_config)
    with FakeModelServer() as server:
        server.queue(Reply(tool_calls=[ToolCallSpec("web_fetch", {"url": url})]), Reply("done"))
        done = run_agent(["-p", "read the page", *flags], project, agent_env(home, server))
        return done, list(tool_results(server.requests).values())


@pytest.mark.e2e
def test_the_model_reads_a_page_the_user_allowed_without_being_asked(site: Site, tmp_path: Path) -> None:
    site.pages["/guide"] = _page("text/html", b"<html><body><h2>Usage</h2><p>FETCHED-GUIDE</p></body></html>")
    done, results = _agent_fetch(
        tmp_path, site.url("/guide"), user_config='[web]\nallow_hosts = ["127.0.0.1"]\n'
    )
    assert done.returncode == 0, done.stderr
    ((text, is_error),) = results
    assert not is_error and "## Usage" in text and "FETCHED-GUIDE" in text


@pytest.mark.e2e
def test_loopback_is_refused_even_with_yes_and_a_project_cannot_allow_it(site: Site, tmp_path: Path) -> None:
    site.pages["/guide"] = _page("text/plain", b"FETCHED-GUIDE")
    done, results = _agent_fetch(tmp_path, site.url("/guide"), "--yes")
    assert done.returncode == 0, done.stderr
    ((text, is_error),) = results
    assert is_error and "allow_hosts" in text and "FETCHED-GUIDE" not in text
    assert site.hits == {}
    refused, _ = _agent_fetch(
        tmp_path, site.url("/guide"), "--yes", project_config='[web]\nallow_hosts = ["127.0.0.1"]\n'
    )
    assert refused.returncode == 2 and "web.allow_hosts cannot be set in a project file" in refused.stderr
    assert site.hits == {}


@pytest.mark.e2e
def test_headless_without_yes_a_new_host_is_not_fetched(tmp_path: Path) -> None:
    done, results = _agent_fetch(tmp_path, "https://docs.example.org/page")
    assert done.returncode == 0, done.stderr
    ((text, is_error),) = results
    assert is_error and "needs approval" in text and "docs.example.org" in text
