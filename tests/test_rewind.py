"""/rewind on a real session: the file watch around real tools in a temp project, the session log,
and the Repl's command, with a scripted provider in place of the network.

Three prompts write, edit and (through bash) delete files; rewinding to prompt 2 puts every file
back as it was before prompt 2 and the next request holds only the conversation before it. Then
the parts: --chat and --code alone, a rewind over a rewind, a prompt a compaction took away,
what cannot be restored (outside the project, over the size limit) named, `--resume` after a
rewind, and the one-line errors.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from agent_cli.agent.file_changes import FILES_TOPIC, REWIND_TOPIC, Change, UndoPlan
from agent_cli.agent.restore import restore
from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.errors import CommandError
from agent_cli.core.requests import Completion
from agent_cli.session import AgentSession
from agent_cli.store.log_records import StateRecord, read_log
from agent_cli.store.sessions import load_session
from agent_cli.store.snapshots import SnapshotStore
from agent_cli.testing.scripted import ScriptedProvider, call, say
from agent_cli.ui.render import Renderer
from agent_cli.ui.repl import Repl


class Project:
    """A session with every call approved in a temp project; `run` sends prompts, `repl` runs lines."""

    def __init__(self, tmp_path: Path, script: list[Completion], *, outside: bool = False) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "project"
        self.root.mkdir(parents=True, exist_ok=True)
        state = str(tmp_path / "state")
        self.env = {"ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path), "XDG_STATE_HOME": state}
        self.provider = ScriptedProvider(list(script))
        self.session = self._open(None, outside)
        self.shown: list[tuple[str, list[str], int]] = []  # the lists offered: title, rows, row marked

    def _open(self, resume: str | None, outside: bool = False) -> AgentSession:
        config = self.tmp / "config.toml"
        config.write_text(f"[tools]\nallow_outside_root = {'true' if outside else 'false'}\n")
        settings = load_settings(
            config_path=config, env=self.env, flags=Flags(model="claude-sonnet-4-5", yes=True), cwd=self.root
        )
        return open_session(settings, env=self.env, resume=resume, make_provider=lambda _: self.provider)

    def run(self, prompt: str) -> None:
        list(self.session.run(prompt))

    def repl(self, *lines: str, picks: list[int | None] | None = None) -> tuple[str, Repl]:
        """Run `lines` in a REPL; with `picks`, its lists to choose from answer with them in turn."""
        out = StringIO()
        # Wide: these tests read what /rewind says, not how it wraps (a temp path under xdist is long).
        renderer = Renderer(Console(file=out, width=1000, color_system=None))
        queue = list(lines)

        def read() -> str:
            if not queue:
                raise EOFError
            return queue.pop(0)

        def choose(title: str, rows: Sequence[str], selected: int) -> int | None:
            assert picks is not None
            self.shown.append((title, list(rows), selected))
            return picks.pop(0)

        repl = Repl(self.session, lambda: renderer, read, chooser=choose if picks is not None else None)
        assert repl.run() == 0
        return out.getvalue(), repl

    def files(self) -> dict[str, str]:
        return {
            p.relative_to(self.root).as_posix(): p.read_text()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and ".transcripts" not in p.parts
        }

    def sent(self) -> list[str]:
        """The texts of the messages of the last request."""
        return [m.text for m in self.provider.requests[-1].messages]


def three_prompts(tmp_path: Path) -> Project:
    """Prompt 1 writes a.txt, prompt 2 edits it and writes b.txt, prompt 3 deletes a.txt and
    creates c.txt through bash."""
    p = Project(
        tmp_path,
        [
            call("write_file", path="a.txt", content="one\n"),
            say("wrote a"),
            call("edit_file", path="a.txt", old_string="one", new_string="two"),
            call("write_file", path="b.txt", content="bee\n"),
            say("edited a, wrote b"),
            call("bash", command="rm a.txt && mkdir -p d && echo sea > d/c.txt && echo changed > keep.txt"),
            say("removed a"),
            say("after the rewind"),
        ],
    )
    (p.root / "keep.txt").write_text("the user's file\n")
    p.run("first: write a")
    p.run("second: edit a, write b")
    p.run("third: remove a")
    assert p.files() == {"b.txt": "bee\n", "d/c.txt": "sea\n", "keep.txt": "changed\n"}
    return p


def test_rewind_2_restores_every_file_and_the_conversation_before_prompt_2(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    out, repl = p.repl("/rewind 2")
    assert p.files() == {"a.txt": "one\n", "keep.txt": "the user's file\n"}
    assert not (p.root / "d").exists()  # the folder bash made went with its file
    assert "conversation rewound to before prompt 2" in out
    assert "files: 2 restored (a.txt, keep.txt); 3 removed (b.txt, d, d/c.txt)" in out
    assert repl.take_prefill() == "second: edit a, write b"
    p.run("second, again")
    assert p.sent() == ["first: write a", "", "", "wrote a", "second, again"]
    # The log has the rewind, with what it changed, and a checkpoint that --resume replays.
    records, _ = read_log(p.session.transcript_path)
    rewinds = [r for r in records if isinstance(r, StateRecord) and r.topic == REWIND_TOPIC]
    assert len(rewinds) == 1 and rewinds[0].data["prompt"] == 2 and rewinds[0].data["chat"] is True
    assert [pt.text for pt in p.session.rewind_points()] == ["first: write a", "second, again"]


def test_the_list_to_choose_from_rewinds_only_the_files_before_prompt_2(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    before = p.sent()
    out, repl = p.repl("/rewind", picks=[1, 2])  # prompt 2, then "the files only"
    (title, rows, marked), (what_title, choices, _) = p.shown
    assert "which prompt" in title and marked == 2  # the newest prompt is marked first
    assert rows[1].startswith("  2  second: edit a, write b  · changed a.txt, b.txt")
    assert rows[2].startswith("  3  third: remove a  · changed a.txt, d, d/c.txt, keep.txt; ran rm a.txt")
    assert "before prompt 2" in what_title and choices[2] == "the files only"
    assert p.files() == {"a.txt": "one\n", "keep.txt": "the user's file\n"}
    assert "conversation rewound" not in out and repl.take_prefill() == ""
    p.run("go on")
    assert p.sent()[: len(before)] == before  # the conversation stayed whole


@pytest.mark.parametrize("picks", [[None], [0, None]])
def test_leaving_either_list_rewinds_nothing(tmp_path: Path, picks: list[int | None]) -> None:
    p = three_prompts(tmp_path)
    files = p.files()
    out, _ = p.repl("/rewind", picks=picks)
    assert "nothing rewound" in out and p.files() == files
    assert [pt.number for pt in p.session.rewind_points()] == [1, 2, 3]


def test_the_list_names_what_each_prompt_changed_and_ran(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    out, _ = p.repl("/rewind")
    lines = [ln.strip() for ln in out.splitlines()]
    assert lines[0] == "1  first: write a" and lines[1] == "changed a.txt"
    assert lines[2] == "2  second: edit a, write b" and lines[3] == "changed a.txt, b.txt"
    assert lines[4] == "3  third: remove a"
    assert lines[5].startswith("changed a.txt, d, d/c.txt, keep.txt; ran rm a.txt && mkdir -p d")


def test_chat_only_keeps_the_files_and_code_only_keeps_the_conversation(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    before = p.files()
    p.session.rewind(3, chat=True, code=False)
    assert p.files() == before
    assert [pt.number for pt in p.session.rewind_points()] == [1, 2]
    history = len(p.session.history)
    p.session.rewind(2, chat=False, code=True)
    assert p.files() == {"a.txt": "one\n", "keep.txt": "the user's file\n"}
    assert len(p.session.history) == history  # the conversation goes on
    assert [pt.number for pt in p.session.rewind_points()] == [1, 2]


def test_a_later_rewind_goes_back_over_an_earlier_one(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    p.session.rewind(2, chat=False)  # the files as before prompt 2; the conversation goes on
    assert p.files() == {"a.txt": "one\n", "keep.txt": "the user's file\n"}
    # Before prompt 3, b.txt was there: only the first rewind's own record says how it was.
    p.session.rewind(3, chat=False)
    assert p.files() == {"a.txt": "two\n", "b.txt": "bee\n", "keep.txt": "the user's file\n"}


def test_a_prompt_a_compaction_took_away_is_rewound_from_the_log(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    p.provider.script.insert(0, say("## Goal and requests\nWrite, edit, remove a.\n## Work state\nDone."))
    list(p.session.compact())
    assert [m.role for m in p.session.history] == ["user", "assistant"]  # the record, and its answer
    assert "Condensed record" in p.session.history[0].text
    p.session.rewind(2)  # the prompts keep their numbers: they are counted in the log
    assert [m.text for m in p.session.history] == ["first: write a", "", "", "wrote a"]
    assert p.files()["a.txt"] == "one\n"


def test_after_clear_the_prompts_are_still_there_to_go_back_to(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    p.session.clear()
    p.session.rewind(3)
    texts = [m.text for m in p.session.history]
    assert texts[0] == "first: write a" and "second: edit a, write b" in texts
    assert texts[-1] == "edited a, wrote b" and "third: remove a" not in texts


def test_resume_after_a_rewind_replays_the_rewound_history(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    p.session.rewind(2)
    session_id = p.session.id
    p.session.close()
    loaded = load_session(p.root, session_id)
    assert [m.text for m in loaded.messages] == ["first: write a", "", "", "wrote a"]
    again = p._open(session_id)
    try:
        assert [pt.number for pt in again.rewind_points()] == [1]
        assert again.rewind_points()[0].files == ("a.txt",)
    finally:
        again.close()


def test_what_cannot_be_restored_is_named(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    p = Project(
        tmp_path,
        [
            say("ok"),
            call("write_file", path=str(outside), content="out\n"),
            call("bash", command="head -c 2000000 /dev/zero > big.bin && echo x > small.txt"),
            say("done"),
        ],
        outside=True,
    )
    (p.root / "big.bin").write_bytes(b"small before\n")
    p.run("one")
    p.run("two")
    out, _ = p.repl("/rewind 2")
    assert f"! not restored: {outside} (outside the project)" in out
    assert "small.txt" not in p.files() and (p.root / "big.bin").read_bytes() == b"small before\n"
    # Now big.bin is over the per-file limit when the next command changes it.
    p.provider.script += [call("bash", command="head -c 1500000 /dev/zero > big.bin"), say("done")]
    (p.root / "big.bin").write_bytes(b"\0" * 1_200_000)
    p.run("three")
    out, _ = p.repl("/rewind 2")
    assert "! not restored: big.bin (over the size limit (1 MiB per file))" in out


def test_snapshots_are_private(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    folder = p.session.log_dir / "snapshots"
    assert folder.stat().st_mode & 0o777 == 0o700
    blobs = list(folder.iterdir())
    assert blobs and all(b.stat().st_mode & 0o777 == 0o600 for b in blobs)
    records, _ = read_log(p.session.transcript_path)
    touches = [r for r in records if isinstance(r, StateRecord) and r.topic == FILES_TOPIC]
    assert [t.data["tool"] for t in touches] == ["write_file", "edit_file", "write_file", "bash"]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("/rewind 99", "✗ no prompt 99: this session has 3 prompts (1-3); /rewind lists them"),
        ("/rewind 0", "✗ no prompt 0: this session has 3 prompts (1-3); /rewind lists them"),
        ("/rewind two", "✗ cannot read 'two': /rewind lists the prompts"),
        ("/rewind 2 --both", "✗ cannot read '2 --both'"),
        ("/rewind 2 --chat --code", "✗ cannot read '2 --chat --code'"),
    ],
)
def test_errors_are_one_line(tmp_path: Path, line: str, said: str) -> None:
    p = three_prompts(tmp_path)
    before = p.files()
    out, _ = p.repl(line)
    assert said in out and "Traceback" not in out
    assert len([ln for ln in out.splitlines() if ln.startswith("✗")]) == 1
    assert p.files() == before


def test_nothing_to_rewind_in_a_new_session(tmp_path: Path) -> None:
    p = Project(tmp_path, [])
    with pytest.raises(CommandError, match="no prompts"):
        p.session.rewind(1)
    out, _ = p.repl("/rewind")
    assert "no prompts yet in this session" in out


def test_hostile_names_reach_the_terminal_visible(tmp_path: Path) -> None:
    p = Project(tmp_path, [call("bash", command="touch \"$(printf 'evil\\033[2Jname')\""), say("ok")])
    p.run("make \x1b]0;title\x07 a file")
    out, _ = p.repl("/rewind")
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2Jname" in out and "\\x1b]0;title\\x07" in out


def test_a_file_bash_deleted_comes_back_with_its_mode(tmp_path: Path) -> None:
    p = Project(tmp_path, [call("bash", command="rm run.sh"), say("gone")])
    script = p.root / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o755)
    p.run("remove the script")
    assert not script.exists()
    p.session.rewind(1, chat=False)
    assert script.read_text() == "#!/bin/sh\necho hi\n" and script.stat().st_mode & 0o777 == 0o755


def test_a_folder_and_a_file_that_swapped_places_are_put_back(tmp_path: Path) -> None:
    p = Project(
        tmp_path, [call("bash", command="rm -r d f && echo file > d && mkdir f && echo in > f/x"), say("ok")]
    )
    (p.root / "d").mkdir()
    (p.root / "d" / "inner.txt").write_text("inner\n")
    (p.root / "f").write_text("was a file\n")
    p.run("swap them")
    assert (p.root / "d").is_file() and (p.root / "f").is_dir()
    out, _ = p.repl("/rewind 1 --code")
    assert p.files() == {"d/inner.txt": "inner\n", "f": "was a file\n"}
    assert "not restored" not in out


def test_a_path_from_the_log_is_not_followed_out_of_the_project(tmp_path: Path) -> None:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / "sub").symlink_to(outside)  # a link swapped in for a folder since the snapshot
    store = SnapshotStore(tmp_path / "session")
    digest = store.put(b"planted\n")
    plan = UndoPlan(
        (
            Change("sub/evil.txt", "file", digest),
            Change("../escape.txt", "file", digest),
            Change(".transcripts/x", "file", digest),
        )
    )
    restored = restore(root, store, plan)
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
    assert not (root / ".transcripts").exists() and restored.count == 0
    assert sorted(lost.path for lost in restored.unrestored) == [
        "../escape.txt",
        ".transcripts/x",
        "sub/evil.txt",
    ]
    assert {lost.why for lost in restored.unrestored} == {
        "not a path a rewind writes (outside the project, in the session store, or redacted)"
    }


def test_a_file_holding_a_key_is_not_copied_into_the_session_store_and_is_named(tmp_path: Path) -> None:
    key = "sk-ant-api03-REWINDCANARY0123456789abcdefghijklmnop"
    p = Project(tmp_path, [call("bash", command="rm .env && echo plain > notes.txt"), say("ok")])
    (p.root / ".env").write_text(f"ANTHROPIC_API_KEY={key}\n")
    p.run("tidy up")
    out, _ = p.repl("/rewind 1")
    assert "! not restored: .env (it holds a key or credential, which the session store never keeps)" in out
    assert "notes.txt" not in p.files()  # the rest is rewound as usual
    stored = "".join(
        f.read_text(errors="replace") for f in (p.root / ".transcripts").rglob("*") if f.is_file()
    )
    assert key[:24] not in stored


def test_a_file_whose_name_is_not_utf8_is_named_not_guessed(tmp_path: Path) -> None:
    p = Project(tmp_path, [call("bash", command="touch \"$(printf 'bad\\377name')\" ok.txt"), say("ok")])
    p.run("make two files")
    out, _ = p.repl("/rewind 1")
    assert "! not restored: bad\ufffdname (its name is not UTF-8" in out
    assert sorted(os.listdir(p.root)) == [".transcripts", os.fsdecode(b"bad\xffname")]  # ok.txt went


def test_a_shell_command_the_user_ran_is_watched_and_is_not_a_prompt(tmp_path: Path) -> None:
    p = Project(tmp_path, [say("ok"), say("ok again")])
    p.run("first")
    p.session.shell("echo made > made.txt")  # `!echo made > made.txt`
    p.run("second")
    found = p.session.rewind_points()
    assert [pt.text for pt in found] == ["first", "second"]
    assert found[0].commands == ("echo made > made.txt",) and found[0].files == ("made.txt",)
    p.session.rewind(1)
    assert "made.txt" not in p.files() and p.session.history == ()


def test_a_compaction_before_a_rewind_is_not_undone_after_it(tmp_path: Path) -> None:
    p = three_prompts(tmp_path)
    p.provider.script.insert(0, say("## Goal and requests\nWrite, edit, remove a.\n## Work state\nDone."))
    list(p.session.compact())
    p.session.rewind(2)
    assert p.session.uncompact() is None  # the rewound history is the conversation now
    assert [m.text for m in p.session.history] == ["first: write a", "", "", "wrote a"]


def test_a_folder_the_agent_made_is_left_when_it_holds_the_user_s_files(tmp_path: Path) -> None:
    p = Project(tmp_path, [call("bash", command="mkdir out && echo built > out/app"), say("ok")])
    p.run("build")
    (p.root / "out" / "mine.txt").write_text("the user's\n")  # made by the user, not the agent
    out, _ = p.repl("/rewind 1")
    assert p.files() == {"out/mine.txt": "the user's\n"}
    assert "! not restored: out (a folder that holds other files is there now; left in place)" in out
