"""Every module in benchmarks/ imports, and every name a benchmark imports from the package or from
another benchmark is there, wherever the import sits (at the top, or inside a function that only a
run reaches). A CI run once failed because benchmarks/long_run.py imported a name the split of
providers/models.py had moved; nothing else imports the benchmarks before they are run.

The modules are imported in a fresh interpreter with benchmarks/ and the repository's root on
sys.path, as `python benchmarks/NAME.py` has them; each module's failure is reported by name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

# Run in a child: importing a benchmark must not change this process (sys.path, module state).
_CHECK = r"""
import ast, importlib, json, sys, traceback
from pathlib import Path

root, bench = Path(sys.argv[1]), Path(sys.argv[2])
sys.path[:0] = [str(bench), str(root)]
ours = {p.stem for p in bench.glob("*.py")}
failures = {}


def last_line(exc):
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def has(module, name):
    found = importlib.import_module(module)
    if hasattr(found, name):
        return True
    try:  # a submodule, not yet imported
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


for path in sorted(bench.glob("*.py")):
    name = path.stem
    try:
        importlib.import_module(name)
    except BaseException as exc:  # (SystemExit too: a benchmark that runs on import)
        failures[name] = last_line(exc)
        continue
    # The imports inside functions, which importing the module does not run.
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [(node.module, a.name) for a in node.names if a.name != "*"]
        else:
            continue
        for module, imported in targets:
            if module.split(".")[0] not in ("agent_cli", *ours):
                continue  # (a third-party package a benchmark may import only when asked to)
            where = f"{name}:{node.lineno}"
            try:
                if imported is None:
                    importlib.import_module(module)
                elif not has(module, imported):
                    failures[where] = f"cannot import name {imported!r} from {module!r}"
            except BaseException as exc:
                failures[where] = last_line(exc)
print(json.dumps(failures))
"""


def import_failures(bench: Path = BENCHMARKS) -> dict[str, str]:
    """Each benchmark module (or `module:line` of an import inside a function) that fails: why."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHECK, str(ROOT), str(bench)],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    failures: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return failures


def test_every_benchmark_module_imports() -> None:
    assert sorted(BENCHMARKS.glob("*.py")), "no benchmarks found"
    assert import_failures() == {}


def test_a_name_that_moved_fails_the_check(tmp_path: Path) -> None:
    """The check itself: a copy of benchmarks/ where one module imports a name from where it used to
    be (at the top), and another does so inside a function."""
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    for path in BENCHMARKS.glob("*.py"):
        (bench / path.name).write_text(path.read_text())
    long_run = bench / "long_run.py"
    text = long_run.read_text()
    moved = "from agent_cli.providers.model_names import keeps_prior_thinking"
    assert moved in text
    long_run.write_text(text.replace(moved, "from agent_cli.providers.models import keeps_prior_thinking"))
    (bench / "lazy_one.py").write_text(
        "def run() -> None:\n    from bench_sessions import no_such_name  # noqa: F401\n"
    )
    failures = import_failures(bench)
    assert set(failures) == {"long_run", "lazy_one:2"}, failures
    assert "keeps_prior_thinking" in failures["long_run"]
    assert "no_such_name" in failures["lazy_one:2"]
