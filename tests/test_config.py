"""Tests for config loading: files < env < flags, file discovery, and one-line errors."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.config.load import (
    PROJECT_RESTRICTED_KEYS,
    Flags,
    find_key_lines,
    load_settings,
    parse_config,
    resolve_settings,
)
from agent_cli.config.schema import SECTIONS, all_fields
from agent_cli.config.settings import Settings
from agent_cli.core.errors import ConfigError
from agent_cli.store import user_dirs as paths

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "config.example.toml"
KEY = "sk-ant-api03-SECRETSECRETSECRET0123456789abcdef"
OPENAI_KEY = "sk-proj-OPENAISECRET0123456789abcdefghij"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "proj").mkdir()
    return tmp_path / "home"


def user_file(home: Path, text: str) -> Path:
    path = home / ".config" / "agent-cli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project_file(cwd: Path, text: str) -> Path:
    path = cwd / ".agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(
    home: Path,
    *,
    env: dict[str, str] | None = None,
    flags: Flags = Flags(),  # noqa: B008 - frozen value
    config_path: Path | None = None,
) -> Settings:
    return load_settings(
        config_path=config_path,
        env={"HOME": str(home), **(env or {})},
        flags=flags,
        cwd=home.parent / "proj",
    )


def error_of(home: Path, **kwargs: object) -> str:
    with pytest.raises(ConfigError) as info:
        load(home, **kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message and message.startswith("config error: ")
    return message


# ---- the example file documents exactly the defaults -------------------------------------------


def test_example_file_yields_exactly_the_defaults(tmp_path: Path) -> None:
    loaded = load_settings(config_path=EXAMPLE, env={}, flags=Flags(), cwd=tmp_path)
    assert loaded == Settings(project_root=tmp_path, sources=(str(EXAMPLE),))


def test_example_file_mentions_every_field() -> None:
    text = EXAMPLE.read_text()
    for section, cls in SECTIONS.items():
        body = text.split(f"[{section}]", 1)[1].split("\n[", 1)[0]  # only this table's text
        for field in dataclasses.fields(cls):
            # Fields whose default is None cannot be written in TOML, so they appear commented out.
            assert re.search(rf"^(# )?{field.name} = ", body, re.M), f"{section}.{field.name} undocumented"


def test_every_settings_section_is_a_table() -> None:
    settings_tables = {f.name for f in dataclasses.fields(Settings)} - {
        "project_root",
        "sources",
        "notices",
        "tables",
    }
    assert set(SECTIONS) == settings_tables
    assert {k.split(".")[0] for k in all_fields()} == settings_tables


# ---- precedence: file < env < flags -------------------------------------------------------------

PRECEDENCE = [
    # (file text, env, flags, attribute path, expected)
    ('[provider]\nmodel = "m-file"\n', {}, Flags(), "provider.model", "m-file"),
    ('[provider]\nmodel = "m-file"\n', {}, Flags(model="m-flag"), "provider.model", "m-flag"),
    ('[provider]\napi_key = "file-key"\n', {}, Flags(), "provider.api_key", "file-key"),
    (
        '[provider]\napi_key = "file-key"\n',
        {"ANTHROPIC_API_KEY": "env-key"},
        Flags(),
        "provider.api_key",
        "env-key",
    ),
    (
        '[provider]\napi_key = "file-key"\n',
        {"ANTHROPIC_API_KEY": ""},
        Flags(),
        "provider.api_key",
        "file-key",
    ),
    (
        '[provider]\napi_key = "file-key"\n',
        {"OPENAI_API_KEY": "other"},
        Flags(),
        "provider.api_key",
        "file-key",
    ),
    (
        "",
        {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/anthropic"},
        Flags(),
        "provider.base_url",
        "http://127.0.0.1:9/anthropic",
    ),
    (
        '[provider]\nbase_url = "http://file"\n',
        {"ANTHROPIC_BASE_URL": "http://env"},
        Flags(),
        "provider.base_url",
        "http://env",
    ),
    (
        '[provider]\nname = "openai"\n',
        {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"},
        Flags(),
        "provider.api_key",
        "o",
    ),
    (
        '[provider]\nname = "openai"\n',
        {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"},
        Flags(provider="anthropic"),
        "provider.api_key",
        "a",
    ),
    ("[context]\ncontext_window = 100000\n", {}, Flags(), "context.context_window", 100000),
    (
        "[context]\ncontext_window = 100000\n",
        {},
        Flags(context_window=50000),
        "context.context_window",
        50000,
    ),
    ("[approvals]\nyes = false\n", {}, Flags(yes=True), "approvals.yes", True),
    ("[approvals]\nyes = true\n", {}, Flags(yes=False), "approvals.yes", True),  # no flag: file stands
    ("[context]\ntrigger_ratio = 0.7\n", {}, Flags(), "context.trigger_ratio", 0.7),
    ("[tools]\nbash_timeout = 30\n", {}, Flags(), "tools.bash_timeout", 30.0),  # ints are fine for floats
    (
        '[approvals]\nallow = ["git status", "pytest"]\n',
        {},
        Flags(),
        "approvals.allow",
        ("git status", "pytest"),
    ),
    ("[provider]\nmax_retries = 0\n", {}, Flags(), "provider.max_retries", 0),
]


@pytest.mark.parametrize(("text", "env", "flags", "attribute", "expected"), PRECEDENCE)
def test_file_then_env_then_flags(
    home: Path, text: str, env: dict[str, str], flags: Flags, attribute: str, expected: object
) -> None:
    user_file(home, text)
    section, name = attribute.split(".")
    value = getattr(getattr(load(home, env=env, flags=flags), section), name)
    assert value == expected
    assert type(value) is type(expected)


def test_provider_flag_switch_drops_what_the_file_wrote_for_the_other_provider(home: Path) -> None:
    user_file(
        home,
        '[provider]\nname = "openai"\nmodel = "gpt-x"\nbase_url = "http://127.0.0.1:8000/v1"\n'
        "max_retries = 3\n",
    )
    loaded = load(home, flags=Flags(provider="anthropic"))
    assert loaded.provider.name == "anthropic"
    assert (loaded.provider.model, loaded.provider.base_url) == ("", None)
    assert loaded.provider.max_retries == 3  # not provider-bound: kept
    same = load(home, flags=Flags(provider="openai"))
    assert (same.provider.model, same.provider.base_url) == ("gpt-x", "http://127.0.0.1:8000/v1")


def test_no_files_gives_defaults_and_project_root(home: Path) -> None:
    loaded = load(home)
    assert loaded == Settings(project_root=home.parent / "proj", sources=())


# ---- which files ---------------------------------------------------------------------------------


def test_project_file_layers_over_user_file(home: Path) -> None:
    user = user_file(
        home, '[provider]\nname = "openai"\nmodel = "user-model"\n[context]\ntrigger_ratio = 0.7\n'
    )
    project = project_file(home.parent / "proj", '[provider]\nmodel = "project-model"\n')
    loaded = load(home)
    assert loaded.sources == (str(user), str(project))
    assert loaded.provider.model == "project-model"  # project wins
    assert loaded.provider.name == "openai"  # user keys the project does not set stay
    assert loaded.context.trigger_ratio == 0.7


def test_only_project_file(home: Path) -> None:
    project = project_file(home.parent / "proj", "[tools]\nmax_iterations = 7\n")
    loaded = load(home)
    assert (loaded.sources, loaded.tools.max_iterations) == ((str(project),), 7)


def test_xdg_config_home_is_honoured(home: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "agent-cli").mkdir(parents=True)
    (xdg / "agent-cli" / "config.toml").write_text("[tools]\nmax_iterations = 9\n")
    user_file(home, "[tools]\nmax_iterations = 1\n")  # ignored: XDG_CONFIG_HOME points elsewhere
    assert load(home, env={"XDG_CONFIG_HOME": str(xdg)}).tools.max_iterations == 9


def test_config_flag_replaces_both_files(home: Path, tmp_path: Path) -> None:
    user_file(home, "[tools]\nmax_iterations = 1\n")
    project_file(home.parent / "proj", "[tools]\nbash_timeout = 5\n")
    explicit = tmp_path / "explicit.toml"
    explicit.write_text("[tools]\nmax_iterations = 3\n")
    loaded = load(home, config_path=explicit)
    assert loaded.sources == (str(explicit),)
    assert (loaded.tools.max_iterations, loaded.tools.bash_timeout) == (3, 120.0)


def test_relative_config_flag_is_relative_to_cwd(home: Path) -> None:
    (home.parent / "proj" / "my.toml").write_text("[tools]\nmax_iterations = 4\n")
    assert load(home, config_path=Path("my.toml")).tools.max_iterations == 4


def test_missing_config_flag_file_is_an_error(home: Path, tmp_path: Path) -> None:
    message = error_of(home, config_path=tmp_path / "nope.toml")
    assert message == f"config error: --config {tmp_path / 'nope.toml'}: no such file"


def test_config_flag_may_set_restricted_keys(home: Path, tmp_path: Path) -> None:
    explicit = tmp_path / "explicit.toml"
    explicit.write_text('[approvals]\nyes = true\nallow = ["ls"]\n[provider]\nbase_url = "http://h"\n')
    loaded = load(home, config_path=explicit)
    assert (loaded.approvals.yes, loaded.approvals.allow, loaded.provider.base_url) == (
        True,
        ("ls",),
        "http://h",
    )


@pytest.mark.parametrize(
    "line",
    [
        "api_key = 'k-123456789'",
        'base_url = "http://evil.example"',
        "yes = true",
        'allow = ["rm"]',
        "allow_outside_root = true",
    ],
)
def test_project_file_cannot_set_restricted_keys(home: Path, line: str) -> None:
    name = line.split(" ")[0]
    key = next(k for k in PROJECT_RESTRICTED_KEYS if k.endswith("." + name))
    path = project_file(home.parent / "proj", f"# comment\n[{key.split('.')[0]}]\n{line}\n")
    message = error_of(home)
    assert message.startswith(f"config error: {path}:3: {key} cannot be set in a project file")
    assert "k-123456789" not in message
    # The same line in the user file is fine.
    path.unlink()
    user_file(home, f"[{key.split('.')[0]}]\n{line}\n")
    load(home)


# ---- errors: syntax --------------------------------------------------------------------------------

SYNTAX = [
    ('[provider]\nname = "openai"\nmodel = = "x"\n', 3, 9),
    ("[context]\ntrigger_ratio = 0.8 junk\n", 2, 21),
    ("[context]\n[context]\n", 2, None),
]


@pytest.mark.parametrize(("text", "line", "column"), SYNTAX)
def test_malformed_toml_names_file_line_and_column(
    home: Path, text: str, line: int, column: int | None
) -> None:
    path = project_file(home.parent / "proj", text)
    message = error_of(home)
    prefix = f"config error: {path}:{line}:" + (f"{column}:" if column else "")
    assert message.startswith(prefix), message
    assert "invalid TOML: " in message and "(at line" not in message


def test_unterminated_string_points_at_the_end(home: Path) -> None:
    path = user_file(home, f'[provider]\nname = "openai"\napi_key = "{KEY}\n\n')
    message = error_of(home)
    assert message.startswith(f"config error: {path}:")
    assert KEY not in message and "invalid TOML" in message


def test_unreadable_files(home: Path) -> None:
    path = user_file(home, "")
    path.write_bytes(b"[tools]\nbash_timeout = \xff\n")
    assert error_of(home) == f"config error: {path}: not UTF-8 text (byte 23)"
    path.unlink()
    path.mkdir()
    assert error_of(home) == f"config error: {path}: is a directory, not a config file"


# ---- errors: values --------------------------------------------------------------------------------

VALUES = [
    # (file text, line, expected message after "file:line: ")
    (
        '# tuning\n\n[context]\nclear_ratio = 0.5\n\n\ntrigger_ratio = "high"\n',
        7,
        'context.trigger_ratio must be a number between 0 and 1 (got "high")',
    ),
    (
        "[context]\ntrigger_ratio = 1.0\n",
        2,
        "context.trigger_ratio must be a number between 0 and 1 (got 1.0)",
    ),
    ("[context]\ntarget_ratio = 0\n", 2, "context.target_ratio must be a number between 0 and 1 (got 0)"),
    (
        "[context]\nclear_protect_tokens = -5\n",
        2,
        "context.clear_protect_tokens must be a positive integer (got -5)",
    ),
    (
        "[context]\nclear_protect_tokens = 4.5\n",
        2,
        "context.clear_protect_tokens must be a positive integer (got 4.5)",
    ),
    ("[context]\nmax_failures = true\n", 2, "context.max_failures must be a positive integer (got true)"),
    ("[provider]\nmax_retries = -1\n", 2, "provider.max_retries must be a whole number, 0 or more (got -1)"),
    ("[provider]\ntimeout = 0\n", 2, "provider.timeout must be a positive number (got 0)"),
    ('[provider]\nname = "gemini"\n', 2, 'provider.name must be one of "anthropic", "openai" (got "gemini")'),
    (
        '[provider]\nbase_url = "localhost:8000"\n',
        2,
        'provider.base_url must be an http:// or https:// URL (got "localhost:8000")',
    ),
    (
        '[tools]\nallow_outside_root = "yes"\n',
        2,
        'tools.allow_outside_root must be true or false (got "yes")',
    ),
    ('[approvals]\nallow = "git"\n', 2, 'approvals.allow must be a list of non-empty strings (got "git")'),
    (
        '[approvals]\nallow = ["git", ""]\n',
        2,
        "approvals.allow must be a list of non-empty strings (got an array)",
    ),
    ("[provider]\nmodel = 4\n", 2, "provider.model must be a string (got 4)"),
    ("provider = 3\n", 1, "provider must be a table, like [provider]"),
    # dotted keys and inline tables
    ('context.trigger_ratio = "x"\n', 1, 'context.trigger_ratio must be a number between 0 and 1 (got "x")'),
    ("[context]\n\ntools.x = 1\n", 3, "unknown key context.tools"),
    ('provider = { name = "x" }\n', 1, 'provider.name must be one of "anthropic", "openai" (got "x")'),
    # cross-field checks name the key that was set (the later one when both are)
    (
        "[context]\ntarget_ratio = 0.92\n",
        2,
        "context.target_ratio (0.92) must be below context.trigger_ratio (0.9)",
    ),
    (
        "[context]\ntrigger_ratio = 0.97\n",
        2,
        "context.trigger_ratio (0.97) must be below context.emergency_ratio (0.95)",
    ),
    (
        "[context]\nemergency_ratio = 0.5\ntrigger_ratio = 0.6\n",
        3,
        "context.trigger_ratio (0.6) must be below context.emergency_ratio (0.5)",
    ),
    (
        "[provider]\nmax_output_tokens = 9000\n[context]\ncontext_window = 8000\n",
        4,
        "provider.max_output_tokens (9000) must be below context.context_window (8000)",
    ),
]


@pytest.mark.parametrize(("text", "line", "expected"), VALUES)
def test_wrong_values_name_file_line_and_key(home: Path, text: str, line: int, expected: str) -> None:
    path = user_file(home, text)
    assert error_of(home) == f"config error: {path}:{line}: {expected}"


def test_project_file_error_names_the_project_file(home: Path) -> None:
    user_file(home, "[context]\ntrigger_ratio = 0.7\n")
    path = project_file(home.parent / "proj", '[context]\n\n\n\n\n\ntrigger_ratio = "high"\n')
    assert error_of(home) == (
        f'config error: {path}:7: context.trigger_ratio must be a number between 0 and 1 (got "high")'
    )


UNKNOWN = [
    (
        "[context]\ntrigger_ration = 0.8\n",
        2,
        "unknown key context.trigger_ration; did you mean context.trigger_ratio?",
    ),
    ('[context]\nmodel = "x"\n', 2, "unknown key context.model; did you mean provider.model?"),
    ("[contexts]\n", 1, "unknown table [contexts]; did you mean [context]?"),
    ("[telemetry]\nenabled = true\n", 1, "unknown table [telemetry]"),
    ('model = "x"\n', 1, "unknown key model (keys go inside a table); did you mean provider.model?"),
    ("[provider]\nxyzzy = 1\n", 2, "unknown key provider.xyzzy"),
]


@pytest.mark.parametrize(("text", "line", "expected"), UNKNOWN)
def test_unknown_keys_suggest_the_closest(home: Path, text: str, line: int, expected: str) -> None:
    path = user_file(home, text)
    assert error_of(home) == f"config error: {path}:{line}: {expected}"


FLAG_ERRORS = [
    (
        Flags(provider="gemini"),
        {},
        'config error: --provider: provider.name must be one of "anthropic", "openai" (got "gemini")',
    ),
    (
        Flags(context_window=0),
        {},
        "config error: --context-window: context.context_window must be a whole number of tokens, at least "
        "4,096 (the system prompt, the tools and a reply need that much) (got 0)",
    ),
    (
        Flags(),
        {"ANTHROPIC_BASE_URL": "nope"},
        'config error: ANTHROPIC_BASE_URL: provider.base_url must be an http:// or https:// URL (got "nope")',
    ),
]


@pytest.mark.parametrize(("flags", "env", "expected"), FLAG_ERRORS)
def test_bad_flags_and_env_are_named(home: Path, flags: Flags, env: dict[str, str], expected: str) -> None:
    assert error_of(home, flags=flags, env=env) == expected


def test_flag_conflicting_with_file_blames_the_flag(home: Path) -> None:
    user_file(home, "[provider]\nmax_output_tokens = 16000\n")
    message = error_of(home, flags=Flags(context_window=8000))
    assert message.startswith("config error: --context-window: provider.max_output_tokens (16000)")


# ---- secrets never reach a message ------------------------------------------------------------------

LEAKS = [
    f'[provider]\napi_key = ["{KEY}"]\n',  # wrong type: the key is not echoed
    f'[provider]\napi_key = "{KEY}"\nbase_url = "{KEY}"\n',  # key pasted in the wrong field
    f'[provider]\nmodel = 3\napi_key = "{KEY}"\n',
    f'[provider]\nname = "{KEY}"\n',
    f'[approvals]\nallow = "{KEY}"\n',
    f'[provider]\napi_keys = "{KEY}"\n',
    f'api_key = "{KEY}"\n',
    f'[provider]\napi_key = "{KEY}" x\n',
    '[provider]\nbase_url = "short-secret"\n',  # the env key value, which looks like nothing special
]


@pytest.mark.parametrize("text", LEAKS)
def test_key_values_never_appear_in_messages(home: Path, text: str) -> None:
    user_file(home, text)
    message = error_of(home, env={"ANTHROPIC_API_KEY": "short-secret", "OPENAI_API_KEY": OPENAI_KEY})
    assert KEY not in message and "short-secret" not in message and OPENAI_KEY not in message


MISUSES = (
    '[provider]\nname = "{}"\n',
    '[provider]\nbase_url = "{}"\n',
    '[approvals]\nallow = "{}"\n',
    '[context]\ntrigger_ratio = "{}"\n',
)


def _misuse_message(template: str, secret: str) -> str | None:
    """The message for the env key copied into one string field of a file (None: a valid value)."""
    try:
        layer = parse_config(template.format(secret), Path("/p/c.toml"), secrets=[secret])
        resolve_settings([layer], {"ANTHROPIC_API_KEY": secret}, Flags(), Path("/p"))
    except ConfigError as exc:
        return str(exc)
    return None


@settings(max_examples=60, deadline=None, database=None)
@given(secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789-_", min_size=8, max_size=60))
def test_env_key_never_appears_when_misused(secret: str) -> None:
    # The env key, copied into any string field of a file, is never echoed back. A key that is an
    # ordinary word ("base_url") is in the message's own text, and one that is a valid value
    # ("anthropic" as provider.name) gives no message at all, so "not a substring" tested the
    # wording; what must hold is that a message does not depend on the key: it reads word for word
    # as it does for another key.
    other = "Zq9-" + "x" * 20 if not secret.startswith("Zq9-") else "Yq8-" + "y" * 20
    for template in MISUSES:
        message = _misuse_message(template, secret)
        if message is not None:  # a valid value is not an error: there is nothing to echo it in
            assert message == _misuse_message(template, other)
            assert other not in message


@pytest.mark.parametrize("secret", ["anthropic", "base_url", "provider", "must-be-a"])
def test_env_key_that_is_a_word_of_the_message_is_still_not_echoed(secret: str) -> None:
    # The examples Hypothesis drew that failed the substring test though nothing was echoed.
    for template in MISUSES:
        message = _misuse_message(template, secret)
        assert message is None or message == _misuse_message(template, "Zq9-" + "x" * 20)


# ---- the line scanner and the paths ------------------------------------------------------------------


def test_find_key_lines() -> None:
    text = (
        "# c\n"  # 1
        "top = 1\n"  # 2
        "[provider]\n"  # 3
        'name = "x"  # trailing\n'  # 4
        '"quoted" = 1\n'  # 5
        "a.b = 2\n"  # 6
        'doc = """\n'  # 7
        "fake = 3\n"  # 8: inside a multi-line string
        '"""\n'  # 9
        "[ context . sub ]\n"  # 10
        "k = 1\n"  # 11
        "[[arr]]\n"  # 12
        "x = 1\n"  # 13
    )
    assert find_key_lines(text) == {
        "top": 2,
        "provider": 3,
        "provider.name": 4,
        "provider.quoted": 5,
        "provider.a": 6,
        "provider.a.b": 6,
        "provider.doc": 7,
        "context.sub": 10,
        "context.sub.k": 11,
        "arr": 12,
        "arr.x": 13,
    }


PATHS = [
    ({"HOME": "/h"}, "/h/.config/agent-cli", "/h/.local/state/agent-cli"),
    ({"HOME": "/h", "XDG_CONFIG_HOME": "/x/c", "XDG_STATE_HOME": "/x/s"}, "/x/c/agent-cli", "/x/s/agent-cli"),
    (
        {"HOME": "/h", "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": ""},
        "/h/.config/agent-cli",
        "/h/.local/state/agent-cli",
    ),
    (
        {"HOME": "/h", "XDG_CONFIG_HOME": "rel/c", "XDG_STATE_HOME": "rel"},
        "/h/.config/agent-cli",
        "/h/.local/state/agent-cli",
    ),  # relative XDG paths are ignored, per the spec
]


@pytest.mark.parametrize(("env", "config", "state"), PATHS)
def test_xdg_dirs(env: dict[str, str], config: str, state: str) -> None:
    assert paths.config_dir(env) == Path(config)
    assert paths.state_dir(env) == Path(state)
    assert paths.user_config_path(env) == Path(config) / "config.toml"


def test_project_config_path() -> None:
    assert paths.project_config_path(Path("/w/p")) == Path("/w/p/.agent/config.toml")


def test_every_flag_an_error_can_name_is_one_the_command_has() -> None:
    """An error names the flag that set a value ("config error: --context-window: ..."): each such
    flag must exist (an error once named --base-url and --max-output-tokens, which do not)."""
    import subprocess
    import sys

    from agent_cli.config.load import FLAG_KEYS

    out = subprocess.run(
        [sys.executable, "-m", "agent_cli", "--help"], capture_output=True, text=True, env={"COLUMNS": "200"}
    ).stdout
    for _, _, flag in FLAG_KEYS:
        assert flag in out, flag


# ---- [sandbox]: a project file may narrow it, never widen it ----------------------------------------


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [
        ('mode = "off"', "mode", "off"),
        ("network = true", "network", True),
        ('writable = ["/"]', "writable", ("/",)),
        ("max_processes = 100000", "max_processes", 100000),
    ],
)
def test_a_project_file_cannot_widen_the_sandbox(home: Path, line: str, field: str, value: object) -> None:
    key = "sandbox." + line.split(" ")[0]
    path = project_file(home.parent / "proj", f"[sandbox]\n{line}\n")
    assert error_of(home).startswith(f"config error: {path}:2: {key} cannot be set in a project file")
    path.unlink()
    user_file(home, f"[sandbox]\n{line}\n")  # the user's own file may
    assert getattr(load(home).sandbox, field) == value


def test_sandbox_settings_from_files_and_the_flag(home: Path) -> None:
    assert load(home).sandbox.mode == "workspace-write"  # the default (the probe decides if it can hold)
    assert load(home).sandbox.max_processes == 1024
    user_file(home, '[sandbox]\nmode = "read-only"\nwritable = ["~/.cache/pip"]\nhidden = ["~/.rclone"]\n')
    project_file(home.parent / "proj", '[sandbox]\nhidden = ["~/.config/secret-tool"]\n')
    loaded = load(home)
    assert (loaded.sandbox.mode, loaded.sandbox.writable) == ("read-only", ("~/.cache/pip",))
    # The project's list adds to the user's: `hidden = []` in a repository unhides nothing.
    assert loaded.sandbox.hidden == ("~/.rclone", "~/.config/secret-tool")
    assert load(home, flags=Flags(sandbox="off")).sandbox.mode == "off"
    assert error_of(home, flags=Flags(sandbox="none")) == (
        "config error: --sandbox: sandbox.mode must be one of "
        '"workspace-write", "read-only", "off" (got "none")'
    )
