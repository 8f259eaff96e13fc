"""A project file's choices that cost money are named in one notice, and the open-ended ones capped."""

from __future__ import annotations

from pathlib import Path

from agent_cli.config.load import Flags, load_settings

EXPENSIVE = """\
[provider]
model = "claude-opus-4-1"
effort = "max"
prompt_caching = false
max_output_tokens = 128000
max_retries = 1000

[tools]
max_iterations = 1000000

[context]
working_budget = 0
"""


def _load(tmp_path: Path, project_text: str, *, user_text: str = "", flags: Flags = Flags()) -> object:  # noqa: B008
    project = tmp_path / "proj"
    (project / ".agent").mkdir(parents=True, exist_ok=True)
    (project / ".agent" / "config.toml").write_text(project_text)
    if user_text:
        user = tmp_path / "home" / ".config" / "agent-cli" / "config.toml"
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(user_text)
    return load_settings(config_path=None, env={"HOME": str(tmp_path / "home")}, flags=flags, cwd=project)


def test_an_expensive_project_file_is_named_and_capped(tmp_path: Path) -> None:
    settings = _load(tmp_path, EXPENSIVE)
    assert settings.tools.max_iterations == 250  # type: ignore[attr-defined]
    assert settings.provider.max_retries == 10  # type: ignore[attr-defined]
    assert settings.provider.max_output_tokens == 32_000  # type: ignore[attr-defined]
    assert settings.context.working_budget == 200_000  # type: ignore[attr-defined]
    (notice,) = settings.notices  # type: ignore[attr-defined]
    assert "\n" not in notice and notice.startswith("the project's ")
    for shown in (
        'model "claude-opus-4-1"',
        'effort "max"',
        "prompt_caching false",
        "max_iterations 1000000 (capped at 250)",
        "working_budget 0 (capped at 200,000)",
    ):
        assert shown in notice


def test_cheap_or_default_choices_say_nothing(tmp_path: Path) -> None:
    settings = _load(tmp_path, "[provider]\nprompt_caching = true\n[tools]\nbash_timeout = 30\n")
    assert settings.notices == ()  # type: ignore[attr-defined]


def test_the_users_own_choices_are_not_capped_or_named(tmp_path: Path) -> None:
    settings = _load(tmp_path, "", user_text="[tools]\nmax_iterations = 5000\n")
    assert settings.tools.max_iterations == 5000 and settings.notices == ()  # type: ignore[attr-defined]


def test_a_flag_over_the_project_file_silences_that_key(tmp_path: Path) -> None:
    text = '[provider]\nmodel = "claude-opus-4-1"\n'
    settings = _load(tmp_path, text, flags=Flags(model="claude-sonnet-4-5"))
    assert settings.notices == ()  # type: ignore[attr-defined]


def test_a_modest_project_value_is_named_but_kept(tmp_path: Path) -> None:
    settings = _load(tmp_path, "[tools]\nmax_iterations = 150\n")
    assert settings.tools.max_iterations == 150  # type: ignore[attr-defined]
    assert "max_iterations 150;" in settings.notices[0]  # type: ignore[attr-defined]


def test_choices_that_cost_less_than_the_defaults_say_nothing(tmp_path: Path) -> None:
    text = '[provider]\neffort = "low"\nmax_output_tokens = 64\nmax_retries = 1\n'
    text += "[tools]\nmax_iterations = 5\n"
    settings = _load(tmp_path, text)
    assert settings.notices == ()  # type: ignore[attr-defined]
    assert settings.provider.max_output_tokens == 64  # type: ignore[attr-defined]
