"""The provider registry: every fact about a provider written once, and every wire built from it."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from agent_cli.config.settings import ProviderName, ProviderSettings, Wire
from agent_cli.core.errors import ConfigError
from agent_cli.providers import factory
from agent_cli.providers.registry import PROVIDERS, provider_entry, wire_for
from agent_cli.providers.resolve import resolve_model

PKG = Path(__file__).resolve().parent.parent / "agent_cli"
# The one home of the provider facts, and the config's list of names (config sits below providers).
REGISTRY = {"providers/registry.py", "config/settings.py"}
# model names: the table (and its name rules), the defaults
MODEL_TABLE = {"providers/models.py", "providers/model_names.py", "providers/registry.py"}


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string constants in a module's code (docstrings are prose, not code: left out)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def _modules() -> list[tuple[str, Path]]:
    """The product's modules. The test doubles (`testing/`) play the providers' servers and a
    provider, so they spell provider and model names as those do; the product never imports them."""
    found = [(str(p.relative_to(PKG)), p) for p in sorted(PKG.rglob("*.py"))]
    return [(rel, p) for rel, p in found if not rel.startswith("testing/")]


def test_provider_names_and_key_variables_are_written_only_in_the_registry() -> None:
    facts = {name for entry in PROVIDERS.values() for name in (entry.name, entry.api_key_env)}
    spread = [
        f"{rel}:{line}: {text!r}"
        for rel, path in _modules()
        if rel not in REGISTRY
        for line, text in _strings(path)
        if text in facts
    ]
    assert spread == []


def test_model_name_rules_are_written_only_in_the_model_table() -> None:
    # A prefix test or a pattern on a model's name ("claude-", "gpt-") belongs to providers/models.py.
    spread = [
        f"{rel}:{line}: {text!r}"
        for rel, path in _modules()
        if rel not in MODEL_TABLE
        for line, text in _strings(path)
        if any(family in text.lower() for family in ("claude-", "gpt-", "gpt_"))
    ]
    assert spread == []


def test_the_config_knows_the_same_providers_and_their_key_variables() -> None:
    assert set(typing.get_args(ProviderName)) == set(PROVIDERS)
    for name, entry in PROVIDERS.items():
        # config/load.py reads the selected provider's `NAME_API_KEY` (the variable its SDK reads).
        assert entry.api_key_env == f"{name.upper()}_API_KEY"
        assert None in entry.wires and set(entry.wires) <= {None, *typing.get_args(Wire)}


def test_an_unknown_provider_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'gemini': use one of anthropic, openai"):
        provider_entry("gemini")
    factory.preload("gemini")  # nothing to load, nothing raised


@pytest.mark.parametrize("name", sorted(PROVIDERS))
@pytest.mark.parametrize("wire", [None, *typing.get_args(Wire)])
@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:1/v1"])
def test_every_wire_a_provider_speaks_builds_its_adapter(
    name: str, wire: Wire | None, base_url: str | None
) -> None:
    settings = ProviderSettings(name=name, api_key="k", base_url=base_url, wire=wire)  # type: ignore[arg-type]
    spoken = wire_for(settings)
    assert spoken in PROVIDERS[name].spoken() and spoken in factory.ADAPTERS
    provider = factory.create_provider(settings, resolve_model(settings))
    assert provider.name == name and provider.model == PROVIDERS[name].default_model
