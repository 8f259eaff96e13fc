"""Recall's answer: one long passage cannot take the whole budget, nor hide the passages after it."""

from __future__ import annotations

from pathlib import Path

from test_context_fakes import tool_round, user

from agent_cli.core.messages import ToolUse
from agent_cli.store.archive import Archive
from agent_cli.store.recall_answer import MIN_ROOM, Shown, fit
from agent_cli.store.terms import question_terms

PORT_LOG = " the listener port = 48213 here ".join(
    [" ".join(["filler words of no interest"] * 300), " ".join(["more filler"] * 600)]
)  # one line of about 16,000 characters, the answer in its first half
ERROR = "E   KeyError: 'tenant_id' in handlers/auth.py:142 (resolve_tenant)"


def _wall(words: str, count: int) -> str:
    """One line of `count` repetitions of `words`: a log or minified file with no line breaks."""
    return " ".join([words] * count)


def test_a_wall_of_one_line_does_not_take_the_answer(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    noise = "\n".join(f"tests/test_auth.py::test_case_{i} header module payload config" for i in range(30))
    failing = f"{noise}\n{ERROR}\n{noise}\n1 failed, 59 passed in 0.4s"
    pytest = {"command": "pytest -q tests/test_auth.py"}
    store.write_span([user("Fix the failing auth tests"), *tool_round("bash", pytest, failing)], "clear")
    # About 22,000 characters on one line, later, and denser in the question's words: ranked first.
    wall = "On the test run: " + _wall("error fail tests auth", 1_000)
    store.write_span([user("again"), *tool_round("bash", pytest, wall)], "clear")
    out = store.search("What error did tests/test_auth.py fail with?", 12_000)
    assert out.index("span-002-clear") < out.index(ERROR)  # the wall first, then the answer all the same
    assert len(out) <= 12_000
    assert (
        "characters before]" in out or "more characters of this passage]" in out
    )  # the wall is cut, and says so


def test_a_passage_that_does_not_fit_is_passed_over_not_the_rest() -> None:
    small = [Shown(f"[s{i}]", f"fact {i} " * 10) for i in range(3)]
    big = Shown("[big]", "x" * 5_000)
    out = fit("q", [small[0], big, small[1], small[2]], 3_000)
    assert all(f"fact {i}" in out for i in range(3))
    assert len(out) <= 3_000
    assert "[big]" in out and "more characters of this passage]" in out  # cut to its share
    full = [Shown("[a]", "a" * 980), Shown("[b]", "b" * 980), Shown("[c]", "c" * 700)]  # 2,686 with breaks
    tight = fit("q", [*full, big, small[0]], 3_000)  # 312 left: under MIN_ROOM for the big one
    assert MIN_ROOM > 3_000 - 2_686 - 2
    assert "fact 0" in tight and "[big]" not in tight  # the big one is passed over, the next one fits
    assert "[1 more passages for 'q' not shown" in tight


def test_a_long_passage_is_cut_around_the_question_words() -> None:
    body = PORT_LOG
    out = fit(
        "which port?",
        [Shown("[log]", body), Shown("[other]", "short")],
        12_000,
        weights=question_terms("port"),
    )
    assert "48213" in out and "short" in out
    assert len(out) < 12_000 // 3 + 200  # the long one kept to its third, the next one whole
    assert "characters before]" in out and "more characters of this passage]" in out
    start = fit("q", [Shown("[log]", body)], 1_000)  # no question terms: its start
    assert start.startswith("[log]\nfiller words") and "characters before" not in start


def test_a_call_asked_by_its_id_may_fill_the_whole_budget(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    content = "\n".join(f"line {i:04d} of the output" for i in range(350))  # about 8,000 characters
    call = tool_round("bash", {"command": "make"}, content)
    store.write_span([user("run"), *call], "clear")
    use = call[0].content[-1]
    assert isinstance(use, ToolUse)
    out = store.search(use.id, 10_000)
    assert "line 0000" in out and "line 0349" in out and "more characters" not in out


def test_the_last_passage_may_take_the_room_left() -> None:
    body = "\n".join(f"line {i:04d} of the build output" for i in range(300))  # about 8,700 characters
    out = fit("make all", [Shown("[only]", body)], 12_000)
    assert out == f"[only]\n{body}"
    two = fit("make all", [Shown("[a]", "short"), Shown("[b]", body)], 12_000)
    assert "line 0299" in two and "more characters" not in two


def test_the_answer_and_its_note_stay_within_the_budget() -> None:
    query = "which of the retry settings did the upload worker read at start?"
    passages = [Shown(f"[p{i}]", "w " * 2_000) for i in range(6)]
    out = fit(query, passages, 12_000)
    assert len(out) <= 12_000 and "more passages for" in out
    assert fit("q", passages, 0) == "\n\n[6 more passages for 'q' not shown; ask with more specific words]"


def test_a_long_call_title_is_cut_and_its_output_kept() -> None:
    head = "[span-001 · m_1]\n[result of write_file {" + "c" * 6_000 + "} · id toolu_9]"
    out = fit("q", [Shown(head, "Wrote 6000 bytes to src/app.py"), Shown("[x]", "y")], 12_000)
    assert "Wrote 6000 bytes" in out and "characters of the call]" in out
    assert out.index("Wrote 6000") < 4_000 + 200


def test_the_best_part_has_text_on_both_sides() -> None:
    body = PORT_LOG
    out = fit(
        "which port?", [Shown("[log]", body), Shown("[x]", "y")], 12_000, weights=question_terms("port")
    )
    kept = out[: out.index("[x]")]
    at = kept.index("48213")
    assert 0.25 < at / len(kept) < 0.75  # near the middle, not at an edge


def test_text_without_white_space_is_cut_in_pieces() -> None:
    body = "日本語のテキスト" * 20_000  # 160,000 characters, no space
    out = fit("q", [Shown("[cjk]", body), Shown("[x]", "y")], 12_000, weights=question_terms("テキスト"))
    assert len(out) <= 12_000 and "[x]\ny" in out and "more characters of this passage]" in out


def test_the_call_a_question_names_keeps_its_start_and_may_take_the_room() -> None:
    body = "# module 0\n" + "\n".join(f"src m0 py line {i}" for i in range(600))  # about 12,000 characters
    named = Shown('[span-001 · m_1]\n[result of read_file {"path": "src/m0.py"}]', body, whole=True)
    out = fit("src/m0.py", [named, Shown("[x]", "src m0 " * 50)], 6_000, weights=question_terms("src/m0.py"))
    assert out.startswith(named.head + "\n# module 0\n") and "characters before" not in out
    assert out.index("more characters of this passage]") > 6_000 // 3  # more than a share: the room left
