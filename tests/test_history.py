"""repair_history / pairing_errors: table cases and properties over random histories."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.core.messages import Block, Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.pairing import INTERRUPTED_RESULT, pairing_errors, repair_history


def use(i: str) -> ToolUse:
    return ToolUse(i, "bash", {"command": f"echo {i}"})


def res(i: str, text: str = "ok") -> ToolResult:
    return ToolResult(i, text)


def a(*blocks: Block) -> Message:
    return Message.of("assistant", blocks)


def u(*blocks: Block) -> Message:
    return Message.of("user", blocks)


def T(text: str) -> TextBlock:
    return TextBlock(text)


def shape(messages: list[Message]) -> list[tuple[str, list[str]]]:
    """A compact picture of a history for table assertions."""
    out = []
    for m in messages:
        parts = []
        for b in m.content:
            if isinstance(b, TextBlock):
                parts.append(f"T:{b.text}")
            elif isinstance(b, ToolUse):
                parts.append(f"U:{b.id}")
            elif isinstance(b, ToolResult):
                parts.append(f"R:{b.tool_use_id}{'!' if b.content == INTERRUPTED_RESULT else ''}")
            else:
                parts.append("S")
        out.append((m.role, parts))
    return out


CASES = [
    (
        "valid stays",
        [u(T("hi")), a(use("1")), u(res("1")), a(T("done"))],
        [("user", ["T:hi"]), ("assistant", ["U:1"]), ("user", ["R:1"]), ("assistant", ["T:done"])],
    ),
    (
        "ends in tool_use",
        [u(T("hi")), a(T("let me"), use("1"), use("2"))],
        [("user", ["T:hi"]), ("assistant", ["T:let me", "U:1", "U:2"]), ("user", ["R:1!", "R:2!"])],
    ),
    (
        "one of two answered",
        [a(use("1"), use("2")), u(res("2"))],
        [("assistant", ["U:1", "U:2"]), ("user", ["R:2", "R:1!"])],
    ),
    (
        "assistant follows assistant",
        [a(use("1")), a(T("again"))],
        [("assistant", ["U:1"]), ("user", ["R:1!"]), ("assistant", ["T:again"])],
    ),
    (
        "user text instead of results",
        [a(use("1")), u(T("stop"))],
        [("assistant", ["U:1"]), ("user", ["R:1!", "T:stop"])],
    ),
    ("orphan result removed", [u(T("hi")), u(res("9"), T("x"))], [("user", ["T:hi"]), ("user", ["T:x"])]),
    (
        "orphan-only message dropped",
        [a(T("a")), u(res("9")), a(T("b"))],
        [("assistant", ["T:a"]), ("assistant", ["T:b"])],
    ),
    (
        "late result is an orphan",
        [a(use("1")), u(T("?")), u(res("1"))],
        [("assistant", ["U:1"]), ("user", ["R:1!", "T:?"])],
    ),
    (
        "duplicate result dropped",
        [a(use("1")), u(res("1", "first"), res("1", "second"))],
        [("assistant", ["U:1"]), ("user", ["R:1"])],
    ),
    (
        "results moved before text",
        [a(use("1")), u(T("note"), res("1"))],
        [("assistant", ["U:1"]), ("user", ["R:1", "T:note"])],
    ),
    ("empty messages dropped", [u(), a(T("  ")), u(T("hi")), a()], [("user", ["T:hi"])]),
    (
        "empty assistant between call and result",
        [a(use("1")), a(), u(res("1"))],
        [("assistant", ["U:1"]), ("user", ["R:1"])],
    ),
    (
        "stray blocks by role",
        [a(T("x"), res("1")), u(use("2"), T("y"))],
        [("assistant", ["T:x"]), ("user", ["T:y"])],
    ),
    (
        "duplicate tool_use id in one message",
        [a(use("1"), use("1")), u(res("1"))],
        [("assistant", ["U:1"]), ("user", ["R:1"])],
    ),
    ("empty history", [], []),
]


def test_table() -> None:
    for name, given_history, expected in CASES:
        repaired = repair_history(given_history)
        assert shape(repaired) == expected, name
        assert pairing_errors(repaired) == [], name


def test_the_interrupted_result_is_an_error() -> None:
    repaired = repair_history([a(use("1"))])
    result = repaired[-1].tool_results[0]
    assert result == ToolResult("1", INTERRUPTED_RESULT, is_error=True)


def test_unchanged_messages_keep_identity_changed_ones_get_new_ids() -> None:
    first, call, answer = u(T("hi")), a(use("1"), use("2")), u(res("1"))
    repaired = repair_history([first, call, answer])
    assert repaired[0] is first and repaired[1] is call
    assert repaired[2].id != answer.id


def test_pairing_errors_name_each_problem() -> None:
    errors = pairing_errors([u(), a(use("1")), u(T("x"), res("2")), a(use("3"))])
    text = "\n".join(errors)
    assert "message 0" in text and "empty message" in text
    assert "tool_use 1 has no tool_result" in text
    assert "orphan tool_result 2" in text
    assert "tool_use 3 has no tool_result (history ends)" in text
    late = pairing_errors([a(use("1")), u(T("x"), res("1"))])
    assert len(late) == 1 and "tool_result 1 after other content" in late[0]


# ---- properties over random histories ----------------------------------------

ids = st.sampled_from(["t1", "t2", "t3", "t4"])
texts = st.sampled_from(["", " ", "hello", "fix the bug", "done"])
blocks = st.one_of(
    texts.map(TextBlock),
    ids.map(use),
    ids.map(res),
    st.just(SummaryBlock("earlier work", "transcripts/x.jsonl")),
)
messages = st.builds(
    lambda role, content: Message.of(role, content),
    st.sampled_from(["user", "assistant"]),
    st.lists(blocks, max_size=4),
)
histories = st.lists(messages, max_size=12)


@settings(max_examples=200)
@given(histories)
def test_repair_always_yields_valid_pairing(history: list[Message]) -> None:
    assert pairing_errors(repair_history(history)) == []


@settings(max_examples=200)
@given(histories)
def test_repair_is_idempotent(history: list[Message]) -> None:
    once = repair_history(history)
    twice = repair_history(once)
    assert twice == once
    assert all(x is y for x, y in zip(once, twice, strict=True))


@settings(max_examples=200)
@given(histories)
def test_valid_histories_are_returned_untouched(history: list[Message]) -> None:
    if pairing_errors(history):
        return
    repaired = repair_history(history)
    assert len(repaired) == len(history)
    assert all(x is y for x, y in zip(repaired, history, strict=True))


@settings(max_examples=200)
@given(histories)
def test_no_text_and_no_tool_call_is_lost(history: list[Message]) -> None:
    def words(ms: list[Message], role: str) -> list[str]:
        blocks = [b for m in ms if m.role == role for b in m.content]
        return [b.text for b in blocks if isinstance(b, TextBlock) and b.text.strip()]

    repaired = repair_history(history)
    for role in ("user", "assistant"):
        assert words(repaired, role) == words(history, role)
    # Tool calls survive in order (a repeated id within one message counts once).
    calls_in = [i for m in history if m.role == "assistant" for i in dict.fromkeys(b.id for b in m.tool_uses)]
    calls_out = [b.id for m in repaired if m.role == "assistant" for b in m.tool_uses]
    assert calls_out == calls_in


@settings(max_examples=200)
@given(histories)
def test_real_results_are_kept_when_they_answer_a_call(history: list[Message]) -> None:
    repaired = repair_history(history)
    real = [r for m in repaired for r in m.tool_results if r.content != INTERRUPTED_RESULT]
    # Every real result in the output came from the input.
    given_results = [r for m in history for r in m.tool_results]
    assert all(r in given_results for r in real)
