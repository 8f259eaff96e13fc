"""context.summary_model through the real SDKs against the fake: the writer's name on the wire.

A session on Claude Sonnet 5.5 (Messages) or GPT-6.2 Sol (Responses) with a cheaper writer of the
same provider: the turn goes out with the session's model, the summary request with the writer's,
accepted by the fake's per-model rules, without the thinking the session's model signed, and
reading nothing of the prefix the session's model cached (the fake's caches are per model, as the
providers' are). /cost bills the summary at the writer's prices, from what the fake reported.
Without the setting, the same summary request goes to the session's model and reads the frame
back from its cache: the trade-off the setting makes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.messages import Usage
from agent_cli.providers.models import cost, lookup
from agent_cli.session import AgentSession
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from agent_cli.testing.summary_shape import is_summary_request
from agent_cli.ui.reports import cost_rows

RECORD = "## Goal and requests\nread a.py\n## Work state\nDone: a.py read. Next step: none."
CASES = {  # provider -> (session model, writer, wire)
    "anthropic": ("claude-sonnet-5-5", "claude-haiku-5-5", None),
    "openai": ("gpt-6.2-sol", "gpt-6-luna", "responses"),
}


def _session(fake: FakeModelServer, tmp_path: Path, provider: str, writer: str | None) -> AgentSession:
    model, _, wire = CASES[provider]
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "ANTHROPIC_API_KEY": "sk-ant-test-live-writer",
        "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        "OPENAI_API_KEY": "sk-test-live-writer",
        "OPENAI_BASE_URL": fake.openai_base_url,
    }
    flags = Flags(provider=provider, model=model, wire=wire, summary_model=writer)
    settings = load_settings(config_path=None, env=env, flags=flags, cwd=tmp_path)
    return open_session(settings, env=env)


def _thinking_items(body: dict[str, object]) -> list[object]:
    """Thinking blocks (Messages) or reasoning items (Responses) a request carries back."""
    items = body.get("messages") or body.get("input") or []
    assert isinstance(items, list)
    found: list[object] = [i for i in items if isinstance(i, dict) and i.get("type") == "reasoning"]
    for item in items:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, dict) and b.get("type") == "thinking"]
    return found


@pytest.mark.parametrize("provider", sorted(CASES))
def test_the_summary_goes_out_with_the_writers_name_and_is_billed_to_it(
    fake_server: FakeModelServer, tmp_path: Path, provider: str
) -> None:
    model, writer, _ = CASES[provider]
    session = _session(fake_server, tmp_path, provider, writer)
    fake_server.queue(Reply("a.py defines add() " * 200, thinking="reading a.py"), Reply(RECORD))
    list(session.run("what is in a.py?"))
    list(session.compact())
    turn, summary = fake_server.requests
    assert turn.body["model"] == model and not is_summary_request(turn.body)
    assert _thinking_items(turn.body) == []  # (the first request has nothing to carry back)
    assert summary.body["model"] == writer and is_summary_request(summary.body)
    # What the session's model reasoned is bound to it: the writer's request carries none of it.
    assert _thinking_items(summary.body) == [] and summary.reasoning_withheld == 0
    (_, turn_usage), (billed_to, summary_usage) = session.usage_log
    assert billed_to == writer
    # The writer has its own cache: the frame the session's model cached is not read back.
    assert turn_usage.cache_write_tokens + turn_usage.cache_read_tokens + turn_usage.input_tokens > 0
    assert summary_usage.cache_read_tokens == 0 and summary_usage.prompt_tokens >= summary.input_tokens > 0
    info = lookup(writer)
    assert info is not None
    rows = {r.model: r for r in cost_rows(session.usage_log)}
    assert rows[writer].dollars == pytest.approx(cost(info, summary_usage))
    assert rows[writer].usage == summary_usage
    session.close()


@pytest.mark.parametrize("provider", sorted(CASES))
def test_without_the_setting_the_summary_reads_the_session_models_cache(
    fake_server: FakeModelServer, tmp_path: Path, provider: str
) -> None:
    model, _, _ = CASES[provider]
    session = _session(fake_server, tmp_path, provider, None)
    fake_server.queue(Reply("a.py defines add() " * 200, thinking="reading a.py"), Reply(RECORD))
    list(session.run("what is in a.py?"))
    list(session.compact())
    _, summary = fake_server.requests
    assert summary.body["model"] == model and is_summary_request(summary.body)
    (_, _), (billed_to, summary_usage) = session.usage_log
    assert billed_to == model
    assert summary_usage.cache_read_tokens > 0, summary_usage  # the frame, at least, comes from the cache
    assert summary_usage != Usage()
    session.close()
