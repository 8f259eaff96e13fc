"""The import lines that keep the core pure and start-up fast."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "agent_cli"


def _is_ui(path: Path) -> bool:
    return path == PKG / "cli.py" or path.parent == PKG / "ui"
SDKS = {"anthropic": "providers/anthropic.py", "openai": "providers/openai.py"}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module, at_top_level) for every import in a file."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module.split(".")[0], id(node) in top))
    return found


def _modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_ui_packages_only_in_ui_modules(path: Path) -> None:
    ui = {m for m, _ in _imports(path)} & {"rich", "prompt_toolkit", "typer"}
    if _is_ui(path):
        if "typer" in ui:
            assert path.stem == "cli", "only cli.py imports typer"
        return
    assert not ui, f"{path.name} is core and must not import {sorted(ui)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_sdks_only_in_their_adapter_and_lazily(path: Path) -> None:
    rel = str(path.relative_to(PKG))
    for module, top_level in _imports(path):
        if module in SDKS:
            assert rel == SDKS[module], f"{rel} imports {module}; only {SDKS[module]} may"
            assert not top_level, f"{rel} imports {module} at module level; import it lazily"


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["transcripts", "--help"]])
def test_startup_commands_import_no_sdk(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from agent_cli.cli import main\n"
        f"sys.argv = ['agent', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('anthropic', 'openai', 'httpx2', 'tiktoken') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout, out.stdout[-400:]
