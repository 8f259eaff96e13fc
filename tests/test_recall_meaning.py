"""Recall ranks by meaning as well as by words (store/meaning.py, store/ranking.py).

The table ships inside the package and loads from it with no network; nothing loads it, nor
numpy, until recall ranks. Through the real `Archive` over a session folder, a question in other
words than the output's finds it among look-alikes that share the question's words.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

from agent_cli.store import meaning
from agent_cli.store.archive import Archive

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_ships_in_the_package_and_is_declared_as_its_data() -> None:
    table = resources.files("agent_cli.store").joinpath(meaning.TABLE)
    assert table.is_file()
    assert len(table.read_bytes()) < 8_000_000  # a small data file, not a model
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert f"store/{meaning.TABLE}" in data["agent_cli"]


def test_terms_of_like_meaning_are_closer_than_unrelated_ones() -> None:
    memory = meaning.meaning({"memori": 1})
    assert memory is not None
    ram, banana = meaning.closeness({"ram": 1}, [memory])[0], meaning.closeness({"banana": 1}, [memory])[0]
    assert ram > banana + 0.2
    assert meaning.known("memori") and not meaning.known("48213")
    assert meaning.meaning({"48213": 3}) is None  # numbers and identifiers have no meaning here
    assert meaning.closeness({"48213": 1}, [memory]) == [0.0]


def test_a_session_and_recall_imports_no_numpy_until_recall_ranks(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agent_cli.store.archive import Archive\n"
        "import agent_cli.store.ranking, agent_cli.store.meaning, agent_cli.app\n"
        f"archive = Archive(Path({str(tmp_path / 's')!r}))\n"
        "archive.write_output('toolu_1', 'memory: 512Mi', header='[full output of read_file]')\n"
        "print('BEFORE', 'numpy' in sys.modules)\n"
        "archive.search('toolu_1', 1000)\n"  # a call's id returns its output: no ranking
        "print('BY ID', 'numpy' in sys.modules)\n"
        "archive.search('how much ram', 1000)\n"
        "print('RANKED', 'numpy' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_PROXY": "*", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert "BEFORE False" in out.stdout and "BY ID False" in out.stdout, out.stdout
    assert "RANKED True" in out.stdout, out.stdout


def _journal(archive: Archive, text: str, n: int) -> None:
    header = f'[full output of bash {{"command": "journalctl -u ledgerd"}} · id toolu_{n}]'
    archive.write_output(f"toolu_{n}", text, header=header)


def test_a_question_in_other_words_than_the_output_finds_it_first(tmp_path: Path) -> None:
    """Every line shares `ledgerd` and `worker` with the question; only the meaning of `killed`
    and `fatal` says which worker died. By words alone the shorter look-alikes come first."""
    archive = Archive(tmp_path / "s")
    _journal(archive, "ledgerd[7]: worker killed, fatal", 1)
    for n, done in enumerate(("scaled", "rotated", "printed", "copied"), 2):
        _journal(archive, f"ledgerd[{n}]: worker {done}", n)
    question = "Which ledgerd worker died?"
    found = archive.search(question, 4000)
    assert found.split("\n\n")[0].endswith("ledgerd[7]: worker killed, fatal")
    by_words = Archive(archive.session_dir, by_meaning=False).search(question, 4000)
    assert not by_words.split("\n\n")[0].endswith("worker killed, fatal")
