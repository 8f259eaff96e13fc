"""The pure layer functions: L0 cap, L1 clear, L4 drop, fidelity, digest, record sections, requests."""

from __future__ import annotations

import json
import re

import pytest
from test_context_fakes import FRAME, FakeCounter, assistant, filler, pairing_errors, tool_round, user

from agent_cli.context.cap import cap_result
from agent_cli.context.clear import is_stub, next_change, plan_clear, stub_for
from agent_cli.context.cut import ACK
from agent_cli.context.emergency import apply_drop, marker_text, plan_drop
from agent_cli.context.fidelity import Facts, check, repair, span_facts
from agent_cli.context.record_parts import (
    UserMessages,
    assemble_record,
    build_digest,
    cap_text,
    collect_user_messages,
    parse_user_messages,
    render_user_messages,
)
from agent_cli.context.summary_request import COMPACTION_TAG, THINKING_ROOM, span_request
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.requests import RequestOptions

count = FakeCounter().count_text

# -- L0 cap ---------------------------------------------------------------------


def _numbered(n: int) -> str:
    return "".join(f"line {i:05d} of the output\n" for i in range(1, n + 1))


@pytest.mark.parametrize(
    ("name", "args", "hint"),
    [
        ("read_file", {"path": "src/big.py"}, 'read_file {"path": "src/big.py", "offset": '),
        ("bash", {"command": "pytest -x"}, "recall("),
    ],
)
def test_cap_keeps_head_and_tail_and_says_how_to_see_the_rest(
    name: str, args: dict[str, str], hint: str
) -> None:
    text = _numbered(2_000)
    use = ToolUse("t1", name, args)
    capped = cap_result(
        use,
        ToolResult("t1", text),
        max_tokens=1_000,
        tokens=count(text),
        count_text=count,
        saved_to="/x/out.txt",
    )
    assert count(capped.content) <= 1_000
    assert capped.content.startswith("line 00001 ") and capped.content.endswith("line 02000 of the output\n")
    assert "/x/out.txt" in capped.content and hint in capped.content
    # The marker's offset points at the first line that was cut.
    if name == "read_file":
        offset = int(capped.content.split('"offset": ')[1].split("}")[0])
        assert f"line {offset:05d}" not in capped.content.split("[...")[0]
        assert f"line {offset - 1:05d}" in capped.content.split("[...")[0]
    # Command output keeps more tail than head; file reads more head.
    head, tail = capped.content.split("[...")[0], capped.content.split("]\n", 1)[1]
    assert (len(head) > len(tail)) == (name == "read_file")


def test_cap_leaves_small_results_alone_and_handles_one_long_line() -> None:
    use = ToolUse("t1", "bash", {"command": "x"})
    small = ToolResult("t1", "ok")
    assert cap_result(use, small, max_tokens=10, tokens=1, count_text=count, saved_to="p") is small
    blob = "x" * 50_000
    capped = cap_result(
        use, ToolResult("t1", blob, True), max_tokens=500, tokens=count(blob), count_text=count, saved_to="p"
    )
    assert count(capped.content) <= 500 and capped.is_error


# -- L1 clear -------------------------------------------------------------------


def _reads(n: int, size: int) -> list[Message]:
    conv = [user("read them all")]
    for i in range(n):
        conv += tool_round("read_file", {"path": f"src/f{i}.py"}, filler(size, f"w{i}"))
    return conv


def test_clear_below_the_batch_size_does_nothing() -> None:
    conv = _reads(4, 4_000)  # ~1k tokens each
    counts = [FakeCounter().count_message(m) for m in conv]
    # protect 2k (the newest two), the other two free ~2k < 5k batch: no change, cache intact.
    assert plan_clear(conv, counts, protect_tokens=2_000, min_batch_tokens=5_000) is None


def test_clear_stubs_old_results_keeps_ids_and_the_newest() -> None:
    conv = _reads(6, 4_000)
    counts = [FakeCounter().count_message(m) for m in conv]
    # Results are ~1,005 tokens each: a 2,100-token budget protects the newest two.
    plan = plan_clear(conv, counts, protect_tokens=2_100, min_batch_tokens=1_000)
    assert plan is not None
    results = [r for m in plan.messages for r in m.tool_results]
    assert [is_stub(r) for r in results] == [True, True, True, True, False, False]
    assert [r.tool_use_id for r in results] == [r.tool_use_id for m in conv for r in m.tool_results]
    assert pairing_errors(plan.messages) == []
    assert plan.cleared == 4 and plan.freed > 3_000
    assert [m.id for m in plan.originals] == [conv[i].id for i in range(1, 9)]  # each result after its call
    stub = results[0].content
    assert stub.startswith('[cleared to save context: read_file {"path": "src/f0.py"} returned ')
    assert f'recall("{results[0].tool_use_id}")' in stub  # the call's id: unique, unlike the path
    # Already cleared results are not cleared again: nothing more to free.
    again = plan_clear(
        plan.messages,
        [FakeCounter().count_message(m) for m in plan.messages],
        protect_tokens=2_100,
        min_batch_tokens=1,
    )
    assert again is None
    # The round the model has just been given is never cleared, however small the budget.
    newest = plan_clear(conv, counts, protect_tokens=0, min_batch_tokens=1)
    assert newest is not None
    assert [is_stub(r) for m in newest.messages for r in m.tool_results] == [True] * 5 + [False]


@pytest.mark.parametrize(
    ("use", "result", "expected"),
    [
        (
            ToolUse("t", "bash", {"command": "make test"}),
            ToolResult("t", "a\nb\nFAIL", True),
            '[cleared to save context: bash {"command": "make test"} failed with 3 lines (error: a); '
            'call recall("t")',
        ),
        (
            ToolUse("t", "bash", {"command": 'echo "hi"'}),
            ToolResult("t", "hi\n"),
            '[cleared to save context: bash {"command": "echo \\"hi\\""} returned 1 lines; call recall("t")',
        ),
        (
            None,
            ToolResult("t9", "x"),
            '[cleared to save context: tool call t9 returned 1 lines; call recall("t9")',
        ),
    ],
)
def test_stub_wording(use: ToolUse | None, result: ToolResult, expected: str) -> None:
    assert stub_for(use, result).startswith(expected)


# -- L4 drop --------------------------------------------------------------------


def test_drop_fifo_keeps_the_latest_user_message_and_the_record() -> None:
    record = Message("user", (SummaryBlock("Condensed record: the goal.", "t.jsonl"),))
    conv = [
        record,
        assistant(ACK),
        user("first"),
        *tool_round("bash", {"command": "a"}, "x" * 400),
        assistant("did a"),
        user("latest request"),
        *tool_round("bash", {"command": "b"}, "y" * 4_000),
    ]
    counts = [FakeCounter().count_message(m) for m in conv]
    plan = plan_drop(conv, counts, need=100)
    assert plan is not None
    dropped = plan.dropped(conv)
    assert [m.text for m in dropped if m.text][:2] == [ACK, "first"]  # oldest first
    assert conv[0] not in dropped and conv[6] not in dropped
    assert conv[7] not in dropped and conv[8] not in dropped  # the round the model has not seen yet
    new = apply_drop(conv, plan, marker_text(len(dropped), "/t/span-002-emergency.jsonl"))
    assert pairing_errors(new) == []
    assert new[0] is record and "span-002-emergency.jsonl" in new[2].text and new[2].role == "user"
    # Everything may have to go, except the latest user message.
    plan = plan_drop(conv, counts, need=10**9)
    assert plan is not None
    new = apply_drop(conv, plan, marker_text(len(plan.drop), "t"))
    assert [m.text for m in new if m.is_plain_user][-1] == "latest request"
    assert pairing_errors(new) == []


def test_drop_with_nothing_droppable() -> None:
    conv = [user("only this")]
    assert plan_drop(conv, [10], need=5) is None


# -- fidelity -------------------------------------------------------------------


def _work_span() -> list[Message]:
    return [
        user("fix the parser"),
        *tool_round("read_file", {"path": "src/parser.py"}, "def parse(): ..."),
        *tool_round("edit_file", {"path": "src/lexer.py", "old": "a", "new": "b"}, "ok"),
        *tool_round("bash", {"command": "pytest"}, "E   AssertionError: expected 3 got 4\nmore", error=True),
        assistant("the test still fails"),
        user("also keep the API stable"),
    ]


def test_fidelity_finds_and_repairs_what_a_record_left_out() -> None:
    span = _work_span()
    facts = span_facts(span)
    assert facts.last_request == "also keep the API stable"
    assert facts.paths == ("src/parser.py", "src/lexer.py")
    assert facts.last_error is not None and "AssertionError: expected 3 got 4" in facts.last_error
    record = "## Files\nsrc/parser.py holds parse()."
    missing = check(facts, record, tail=[])
    assert missing.paths == ("src/lexer.py",) and missing.last_request and missing.last_error
    repaired = repair(record, missing)
    assert check(facts, repaired, tail=[]).__bool__() is False
    # What the kept tail mentions need not be repeated.
    tail = [user("also keep the API stable"), *tool_round("read_file", {"path": "src/lexer.py"}, "x")]
    missing = check(facts, record + "\nAssertionError: expected 3 got 4", tail)
    assert not missing


PLAN = "Next: re-run tests/test_upload.py once the retry fix is in."


def _planned_span() -> list[Message]:
    """A request, a reply that states its next step, and a later reply that does not."""
    return [
        user("fix the upload retries"),
        assistant(f"The retry loop never backs off.\n\n{PLAN}"),
        *tool_round("read_file", {"path": "src/upload.py"}, "def retry(): ..."),
        assistant("Reading the config too."),
    ]


def test_fidelity_carries_the_next_step_stated_since_the_last_request() -> None:
    plan, span = PLAN, _planned_span()
    facts = span_facts(span)
    assert facts.next_step == plan
    record = "## State\nThe user wants the upload retries fixed; src/upload.py read."
    repaired = repair(record, check(facts, record, tail=[]))
    assert "- The next step the assistant stated last: " + plan in repaired
    assert not check(facts, record + "\n- " + plan, tail=[]).next_step  # kept by the model: nothing added
    assert span_facts([Message("user", (SummaryBlock(repaired, "a.jsonl"),))]).next_step == plan  # read back
    # An earlier record's next step stands until the assistant states another or the user asks anew.
    earlier = Message("user", (SummaryBlock(f"## State\n- {plan}", "a.jsonl"),))
    assert span_facts([earlier, assistant(ACK), *tool_round("bash", {"command": "ls"}, "x")]).next_step
    assert span_facts([earlier, assistant(ACK), user("now the auth bug")]).next_step is None
    run_together = Message("user", (SummaryBlock(f"- assistant: Raised the timeout. {plan} edit_file", "a"),))
    assert span_facts([run_together]).next_step == plan + " edit_file"  # a record's line, from "Next:" on
    assert span_facts([assistant(f"Raised the timeout. {plan}")]).next_step is None  # not in a reply


# -- digest ---------------------------------------------------------------------


def test_digest_lists_files_commands_errors_and_last_words() -> None:
    span = [*_work_span()[:-1]]
    span += tool_round("bash", {"command": "make build"}, "done\nexit code: 0")
    digest = build_digest(span)
    assert "src/parser.py (read_file)" in digest and "src/lexer.py (edit_file)" in digest
    assert "`pytest` -> failed" in digest and "`make build` -> exit 0" in digest
    assert "AssertionError: expected 3 got 4" in digest
    assert "the test still fails" in digest
    assert build_digest(span) == digest  # deterministic


def test_digest_keeps_the_next_step_a_later_reply_would_hide_until_a_new_request() -> None:
    plan, span = PLAN, _planned_span()
    digest = build_digest(span)
    assert "## The next step it stated last\n" + plan in digest
    assert build_digest([*span[:2]]).count(plan) == 1  # said in the last words already: not twice
    # A newer request supersedes the plan stated before it.
    assert plan not in build_digest([*span, user("stop, look at the auth bug instead"), assistant("On it.")])
    # Prose that merely starts with the letters is no plan.
    assert "## The next step" not in build_digest([user("q"), assistant("Nextcloud syncs it.\nok")])


def test_digest_folds_in_the_earlier_record_without_its_user_section() -> None:
    users = render_user_messages(UserMessages(("old request",)), 100, count)
    earlier = Message("user", (SummaryBlock(f"## Work state\nDone: parser.\n\n{users}", "a.jsonl"),))
    digest = build_digest([earlier, assistant(ACK), user("next")])
    assert "Done: parser." in digest and "old request" not in digest


# -- the user's messages, verbatim ----------------------------------------------


def test_user_messages_newest_first_within_budget_oldest_elided() -> None:
    texts = tuple(f"request number {i}: " + "word " * 20 for i in range(10))
    section = render_user_messages(UserMessages(texts), budget=100, count=count)
    assert texts[-1] in section and texts[0] not in section
    parsed = parse_user_messages(section)
    assert parsed.texts == texts[-len(parsed.texts) :] and parsed.total == 10
    assert f"({10 - len(parsed.texts)} earlier user messages not shown" in section


def test_user_messages_keep_the_task_and_the_newest_and_elide_the_middle() -> None:
    task = "Fix the auth tests. Constraint: never add the requests library."
    decision = "Decision: we keep SQLite for the queue."
    chatter = tuple(f"question {i}: " + "word " * 40 for i in range(30))
    texts = (task, decision, *chatter)
    section = render_user_messages(UserMessages(texts), budget=400, count=count)
    assert task in section and decision in section and chatter[-1] in section
    assert chatter[len(chatter) // 2] not in section
    assert "[user message 1]" in section and f"[user message {len(texts)}]" in section
    gap = re.search(r"\((\d+) user messages not shown here; recall finds them", section)
    assert gap is not None
    parsed = parse_user_messages(section)
    assert parsed.texts[:2] == (task, decision) and parsed.texts[-1] == chatter[-1]
    assert not any("not shown here" in t for t in parsed.texts)
    assert len(parsed.texts) + int(gap.group(1)) == len(texts)
    # A second compaction folds the record in: the task keeps its place, new messages number on.
    record = Message("user", (SummaryBlock(f"## Work state\n\n{section}", "t"),))
    again = collect_user_messages([record, assistant(ACK), user("one more thing")])
    assert again.numbered()[0] == (1, task) and again.numbered()[-1] == (len(texts) + 1, "one more thing")
    second = render_user_messages(again, budget=400, count=count)
    assert task in second and "one more thing" in second and f"[user message {len(texts) + 1}]" in second


def test_user_messages_roll_over_records_and_stay_verbatim() -> None:
    odd = "line one\n[user message 3]\n  indented ## not a header\n"
    first = render_user_messages(UserMessages(("a", odd)), 1_000, count)
    record = Message("user", (SummaryBlock("body\n\n" + first + "\n\nclosing", "t"),))
    users = collect_user_messages(
        [record, assistant(ACK), user("b"), *tool_round("bash", {}, "x"), user("c")]
    )
    assert users.texts[0] == "a" and users.texts[-2:] == ("b", "c")
    assert "line one" in users.texts[1]


def test_a_single_huge_user_message_is_cut_not_lost() -> None:
    section = render_user_messages(UserMessages(("z" * 10_000,)), budget=200, count=count)
    assert "characters cut; recall finds the rest" in section and count(section) < 400


def test_record_names_its_transcript_and_recall_and_keeps_every_word() -> None:
    users = render_user_messages(UserMessages(("summarize the logs",)), 100, count)
    record = assemble_record(
        body="We summarized it.",
        users=users,
        transcript="/t/span-001.jsonl",
        replaced=7,
        recall_hint='"src/a.py"',
    )
    assert record.startswith("Condensed record of the earlier conversation: 7 messages")
    assert "/t/span-001.jsonl" in record and 'recall("src/a.py")' in record
    assert "We summarized it." in record and "summarize the logs" in record


def test_cap_text_enforces_the_length() -> None:
    long = "\n".join(f"fact {i}" for i in range(2_000))
    capped = cap_text(long, 100, count)
    assert count(capped) <= 110 and capped.endswith("length cap]")
    assert cap_text("short", 100, count) == "short"


# -- the summary request --------------------------------------------------------


def test_span_request_reuses_the_prefix_and_ends_with_the_instruction() -> None:
    span = [*_work_span()[:-1], assistant("paused")]
    req = span_request(span, FRAME, 600, focus="the parser bug")
    assert req.system == FRAME.system and req.tools == FRAME.tools
    # The main requests' options (their tool_choice): a change of it would be a new messages prefix.
    assert req.options == RequestOptions() and req.max_tokens == 600 * THINKING_ROOM
    assert list(req.messages[:-1]) == span  # the same messages, same ids: the cached prefix
    last = req.messages[-1]
    assert last.role == "user" and "Summarize" in last.text and "the parser bug" in last.text
    instruction = last.content[-1]
    assert isinstance(instruction, TextBlock) and instruction.text.startswith(COMPACTION_TAG + "\n")
    for section in (
        "Goal and requests",
        "Constraints and decisions",
        "Files",
        "Commands and errors",
        "Work state",
    ):
        assert f"## {section}" in last.text


def test_span_request_merges_the_instruction_into_a_final_user_turn() -> None:
    span = [user("a"), *tool_round("bash", {"command": "ls"}, "x")]
    req = span_request(span, FRAME, 600, focus=None)
    assert len(req.messages) == 3 and req.messages[-1].tool_results and "Summarize" in req.messages[-1].text
    assert pairing_errors(list(req.messages)) == []
    json.dumps([m.to_json() for m in req.messages])  # still a valid message list


def test_cap_fits_cjk_text_by_its_own_count() -> None:
    from agent_cli.tokens.estimate import estimate_tokens

    text = "".join(f"第{i}行：上下文压缩测试，保留开头和结尾。\n" for i in range(3_000))
    use = ToolUse("t1", "bash", {"command": "cat log"})
    capped = cap_result(
        use,
        ToolResult("t1", text),
        max_tokens=2_000,
        tokens=estimate_tokens(text),
        count_text=estimate_tokens,
        saved_to="/x/o.txt",
    )
    assert estimate_tokens(capped.content) <= 2_000
    assert capped.content.startswith("第0行") and "第2999行" in capped.content


def test_files_carried_from_the_section_code_appended_not_an_older_one_folded_into_the_body() -> None:
    older = repair("## Work state\nread two files", Facts(), ["src/a.py", "src/b.py"])
    cut = older[: older.index("src/a.py") + 8]
    folded = f"Digest of earlier work:\n{cut}\n[... 900 characters left out ...]\n"
    record = repair(folded, Facts(), ["src/a.py", "src/b.py", "src/c.py", "src/d.py"])
    earlier = Message("user", (SummaryBlock(record, "t"),))
    assert span_facts([earlier, assistant(ACK), user("go on")]).paths == (
        "src/a.py",
        "src/b.py",
        "src/c.py",
        "src/d.py",
    )


def test_next_change_skips_stubs_and_small_results_not_the_newest_round() -> None:
    big = filler(2_000)
    rounds = [
        *tool_round("bash", {"command": "ls"}, "a.py"),  # too small to clear: never changes
        *tool_round("read_file", {"path": "a.py"}, big),
        *tool_round("read_file", {"path": "b.py"}, big),
    ]
    history = [user("go"), *rounds]
    counts = [count(str(m.to_json())) for m in history]
    assert next_change(history, counts) == 4  # the result of a.py
    stubbed = list(history)
    stubbed[4] = history[4].replace(
        [ToolResult(history[4].tool_results[0].tool_use_id, stub_for(None, history[4].tool_results[0]))]
    )
    # b.py's is the newest round's: this request keeps it, the next clear stubs it first (it was
    # skipped, so the message before it was never marked and the next request wrote it all again).
    assert next_change(stubbed, counts) == 6
    assert next_change([user("go"), *rounds[:2]], counts[:3]) is None
