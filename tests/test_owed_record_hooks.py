"""A record owed by the last run is a compaction like any other: the next run asks the PreCompact
hooks before it makes it, with the trigger "auto", through the real hook commands (the user's own
config), the session, the engine and a scripted provider. A hook that blocks leaves the digest and
the record owed: asked again before the next request, and still owed when the run ends; one that
lets it go adds its additionalContext to the summary instruction."""

from __future__ import annotations

import json
from pathlib import Path

from test_app import RECORD, Models, _env, end_owing, is_summary

from agent_cli.app import LATEST, open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.config.settings import Settings
from agent_cli.context.across_runs import logged_owed
from agent_cli.core.events import HookOutput
from agent_cli.store.log_records import read_log
from tests.hook_scripts import Recorder

FLAGS = Flags(model="claude-sonnet-4-6", context_window=32_000)
EXTRA = "Keep the order of the notes."


def settings_with(tmp_path: Path, env: dict[str, str], name: str, precompact: str | None) -> Settings:
    config = tmp_path / f"{name}.toml"
    config.write_text(f"[[hooks.PreCompact]]\ncommand = '''{precompact}'''\n" if precompact else "")
    return load_settings(config_path=config, env=env, flags=FLAGS, cwd=tmp_path)


def test_a_precompact_hook_is_asked_before_an_owed_record_and_may_block_it(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "PATH": "/usr/bin:/bin"}
    models = Models()
    end_owing(settings_with(tmp_path, env, "first", None), env, models)
    blocks = Recorder(tmp_path)
    blocking = settings_with(tmp_path, env, "blocking", blocks.command(stderr="not now", code=2))
    again = open_session(blocking, env=env, resume=LATEST, make_provider=models.make)
    said = [e for turn in ("go on", "and on") for e in again.run(turn)]
    list(again.end())
    history = again.history
    log = again.log.path
    again.close()
    asked = models.asked["claude-sonnet-4-6"]
    assert not any(is_summary(q) for q in asked) and len(asked) == 2  # no record made behind the hook
    assert RECORD not in asked[-1].messages[0].text  # the digest stays
    seen = [s for s in blocks.seen() if s["hook_event_name"] == "PreCompact"]
    assert [s["trigger"] for s in seen] == ["auto", "auto"]  # like any automatic compaction, each request
    skipped = [e.text for e in said if isinstance(e, HookOutput)]
    assert skipped == ["compaction skipped this turn: not now"] * 2  # said each time
    assert logged_owed(read_log(log)[0], history) is not None  # still owed, for the next run
    # The next run's hook lets it go, with context for the summary: the record is made first.
    (tmp_path / "lets").mkdir()
    lets = Recorder(tmp_path / "lets")
    answer = json.dumps({"hookSpecificOutput": {"hookEventName": "PreCompact", "additionalContext": EXTRA}})
    letting = settings_with(tmp_path, env, "letting", lets.command(stdout=answer))
    third = open_session(letting, env=env, resume=LATEST, make_provider=models.make)
    list(third.run("last one"))
    third.close()
    asked = models.asked["claude-sonnet-4-6"]
    assert [is_summary(q) for q in asked[:2]] == [True, False]
    assert EXTRA in asked[0].messages[-1].text and RECORD in asked[1].messages[0].text
    assert [s["trigger"] for s in lets.seen()] == ["auto"]
