"""Replay a session through a policy as the agent's loop would, and bill and score what it sends.

    replay(session, policy, frame_tokens) -> Run            the policy on the steady clock
    replay_paced(session, make_policy, frame_tokens) -> Run  and again on the paused one, if it reads it

For each step: a user message is appended; a model step prepares the request (the policy's history)
and sends it; the reply and its tool results are appended (through the policy's `ingest`). The
same rules hold for every policy:

- **Counts.** Every request is counted with one reference tokenizer (o200k_base, exact: what
  OpenAI bills), whatever the policy's own estimate; Claude's count is that times
  `CLAUDE_RATIO` (1.3: Claude 4.7 and later count about 30% more tokens for the same text).
- **Feasibility.** A request whose Claude count is over the window is refused, as the provider
  refuses it, and not billed. The policy may `react` once (ours and the JavaScript seed do); if it
  cannot, or the retry is refused too, the session has failed for it at that request and the run
  is reported as failed, not priced.
- **Caching** (`bench_billing.py`): every request is built as the agent builds it and put on the
  wire by the product's adapters, then billed by `agent_cli.billing`'s models: Anthropic's
  (breakpoints where `anthropic_wire.to_wire` puts them: the system prompt, the last tool, the
  newest message, and the policy's edit point, `Policy.anchor`: what the product marks for ours,
  the newest message it rewrote for a baseline; a read only at a prefix an earlier request wrote,
  the 20-block look-back, 5-minute entries refreshed on a read, `tool_choice` part of the
  messages' prefix) and OpenAI's automatic cache (any earlier prefix from 1,024 tokens, 5
  minutes), each at two paces: `steady` (20 s a model step, 90 s a user message: no entry
  expires) and `paused` (the user's pauses drawn from a lognormal, median 120 s, sigma 1.2: about
  one in five past the 5-minute TTL).
- **Paces a policy lives through.** Each run bills every request at both paces, but a policy's
  `now` is one clock: the steady one in `replay`'s default run. A policy that reads the clock (ours:
  its engine tells a cold cache by it, and after an idle gap past the TTL clears any batch, the next
  request writing everything anyway; its record prepared ahead is ready by it) is run again by
  `replay_paced` with `now` the paused clock, from a fresh policy and the same seeded ids, and its
  paused bills and the probes at the paused pace are that run's (`Run.paused`, `Run.at`); its steady
  figures, fingerprint and ledger stay the first run's. A policy that never reads `now`
  (`Policy.read_clock`: the seeds, masking, hybrid, none) gets nothing else that differs between
  the paces, so its requests are the same bytes at both and one run serves both
  (tests/test_bench_paused.py holds that for each).
- **Summary calls** are requests like any other: the frame, then the policy's own summary input,
  through the same caches, as they are sent: ours with the main requests' `tool_choice` (it reads
  the cached conversation back; a span sent as text chunks asks for no tool calls, `tool_choice:
  none`, which Anthropic bills as a new messages prefix); their output billed. A summary made at
  the trigger blocks the turn it runs in: the user waits `SUMMARY_FIRST_TOKEN_S` plus its output
  at `OUTPUT_TOKENS_PER_S`. Ours
  prepares its record ahead (context/decide.py) and is billed for it when it is sent; the user waits
  only for what is left of that time when the record is swapped in (the steady clock since), and
  for none of a record never swapped in. The seed policies have no such path: every summary blocks.
  (`replay(..., writer=...)` bills them instead through another model's own caches, as
  `summary_writer.py` does; without it every figure is as before.)
- **Probes** on the same requests for every policy (every `PROBE_EVERY`-th), after Factory (Dec
  2025): *recall* (each fact planted so far: its answer is in the request, or a policy with recall
  finds it: it is asked about every fact at every probe point, with the fact's question or, at every
  other probe, its paraphrase (`Fact.asked`: words of a question only, no oracle phrase); or, for
  any policy, a fact still missing whose file the request or the question names is read again;
  the calls and their results are one tool round trip, billed: one more request), *artifact*
  (every file or folder a tool call named so far by a path input of `PATH_INPUTS` is named in the
  request), *continuation* (the latest user request, and the next step stated since it in words the
  request carries itself: not in a line our records copy by code, `own_words`), *decision* (the
  user's constraints and decisions, verbatim).

Deterministic: the same session and policy give the same bytes in every request and the same figures.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from bench_billing import CACHES, CLAUDE_RATIO, Bill, Caches, ToolChoice, Wire, read_units, reference_count
from bench_ledger import Ledger, edits, first
from bench_policies import Policy, SummaryCall
from bench_sessions import Fact, Session, seeded_ids

from agent_cli.context.signals import NEXT_STEP_LINE
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.providers.model_info import ModelInfo

__all__ = [
    "CACHES",
    "CLAUDE_RATIO",
    "CLOCKS",
    "PARTS",
    "PATH_INPUTS",
    "PROBES",
    "PROBE_EVERY",
    "Bill",
    "Run",
    "reference_count",
    "replay",
    "replay_paced",
    "request_text",
    "touched_paths",
]

PROBES = ("recall", "artifact", "continuation", "decision")
# Beside the probes, in "at least as faithful": the share of requests that carried the message they
# answer (`Run.unseen`); a request without it is credited with a reply its model could not write.
SEEN = "results seen"
PROBE_EVERY = 10  # every policy is probed on the same requests: the 10th, 20th, ... of the session
# The inputs that name a file or folder a call touched, for the artifact probe: ours and the made-up
# sessions' tools (`path`), and Claude Code's in the recorded ones (Read, Edit, Write `file_path`;
# NotebookEdit `notebook_path`; Grep and Glob `path`).
PATH_INPUTS = ("path", "file_path", "notebook_path")
MODEL_STEP_SECONDS = 20.0
USER_STEP_SECONDS = 90.0
PAUSE_MEDIAN_SECONDS, PAUSE_SIGMA = 120.0, 1.2
SUMMARY_FIRST_TOKEN_S, OUTPUT_TOKENS_PER_S = 1.0, 60.0
DIGEST_NEXT_STEP = (
    "## The next step it stated last"  # a digest's section (context/condense.py), built by code
)
PAUSED = "-paused"  # the caches billed at the paused pace end so
CLOCKS = ("steady", "paused")  # the clock a policy sees: `replay(..., pace=...)`
PARTS = ("turns", "summaries", "recall")  # what the Claude bill at the steady pace paid for


@dataclass
class Run:
    policy: str
    window: int
    shape: str = ""
    seed: int = 0
    outputs: str = ""
    summarizer: str = ""
    requests: list[int] = field(default_factory=list)  # Claude count of each request sent, in order
    failed_at: int | None = None  # the request the provider refused and the policy could not go past
    bills: dict[str, Bill] = field(default_factory=lambda: {c: Bill() for c in CACHES})
    summary_calls: int = 0
    summary_input: int = 0  # Claude tokens
    summary_output: int = 0
    digests: int = 0
    recall_calls: int = 0
    # requests sent without the message they answer (the tool results just returned, or the user's
    # words) as it was given: the session's next reply was written from it, so a request without it
    # could not have produced that reply
    unseen: int = 0
    wait_seconds: float = 0.0  # the user's wait on summary calls
    parts: dict[str, Bill] = field(default_factory=lambda: {k: Bill() for k in PARTS})  # Claude, steady
    fingerprint: str = ""  # a hash of every request's bytes, in order
    probes: dict[str, list[bool]] = field(default_factory=lambda: {p: [] for p in PROBES})
    ledger: Ledger = field(default_factory=Ledger)  # the Claude bill at the steady pace, by cause
    clears: int = 0  # ours' L1 clears, and those made after an idle gap past the cache's TTL
    idle_clears: int = 0
    pace: str = "steady"  # the clock the policy saw
    # The run in which the policy saw the paused clock, for a policy that reads the clock
    # (`replay_paced`): its paused bills are this run's, and its probes answer a paused cache's
    # `share(probe, cache)` (`at`).
    paused: Run | None = None

    @property
    def finished(self) -> bool:
        return self.failed_at is None and (self.paused is None or self.paused.failed_at is None)

    def at(self, cache: str) -> Run:
        """The run a cache's figures come from: the paused run for a paused cache, where there is one."""
        return self.paused if self.paused is not None and cache.endswith(PAUSED) else self

    def share(self, probe: str, cache: str = "claude") -> float | None:
        run = self.at(cache)
        if probe == SEEN:
            return 1 - run.unseen / len(run.requests) if run.requests else None
        checks = run.probes[probe]
        return sum(checks) / len(checks) if checks else None

    def with_paused(self, paused: Run) -> Run:
        """This steady run, its paused caches billed as `paused` (the policy at the paused pace) was."""
        assert self.pace == "steady" and paused.pace == "paused", (self.pace, paused.pace)
        for cache in CACHES:
            if cache.endswith(PAUSED):
                self.bills[cache] = paused.bills[cache]
        self.paused = paused
        return self

    def dollars(self, cache: str, prices: ModelInfo) -> float:
        return self.bills[cache].dollars(prices, CLAUDE_RATIO if cache.startswith("claude") else 1.0)

    @property
    def peak(self) -> int:
        return max(self.requests, default=0)

    @property
    def mean(self) -> float:
        return sum(self.requests) / max(len(self.requests), 1)


class _Counts:
    """Per-message reference counts (the feasibility check's), computed once per message object."""

    def __init__(self, frame_tokens: int) -> None:
        self.frame = frame_tokens
        self._tokens: dict[int, tuple[int, Message]] = {}

    def _of(self, message: Message) -> int:
        got = self._tokens.get(id(message))
        if got is None or got[1] is not message:
            blocks = [reference_count(json.dumps(b.to_json(), ensure_ascii=False)) for b in message.content]
            got = (sum(blocks) + 4, message)  # the message's own overhead
            self._tokens[id(message)] = got
        return got[0]

    def tokens(self, messages: list[Message]) -> list[int]:
        return [self._of(m) for m in messages]


class _Clocks:
    def __init__(self, seed: int) -> None:
        self.steady = self.paused = 0.0
        self.rng = random.Random(f"pauses-{seed}")

    def user(self) -> None:
        self.steady += USER_STEP_SECONDS
        self.paused += self.rng.lognormvariate(0, PAUSE_SIGMA) * PAUSE_MEDIAN_SECONDS

    def model(self, seconds: float = MODEL_STEP_SECONDS) -> None:
        self.steady += seconds
        self.paused += seconds


class _Biller:
    """Sends requests through the four caches (`bench_billing.py`) and adds them to the run's bills."""

    def __init__(self, run: Run, counts: _Counts, clocks: _Clocks, wire: Wire) -> None:
        self.run, self.counts, self.clocks, self.wire = run, counts, clocks, wire
        self.caches = Caches()

    def bill(
        self,
        messages: list[Message],
        output: int,
        part: str,
        anchor: int | None = None,
        own: list[bool] | None = None,
        tool_choice: ToolChoice = "auto",
        newest: bool = True,
        span_end: int | None = None,
        checkpoint: int | None = None,
    ) -> int:
        """Bill one request as `part` of the session; returns its reference count. `own[i]`: message i
        is the session's own (for the ledger; given for main requests). `newest`: whether the newest
        message is marked (the policy's `cache_newest`); `span_end`: the policy's `cache_span_end`;
        `checkpoint`: its `cache_checkpoint`."""
        at = self.clocks.paused if self.run.pace == "paused" else self.clocks.steady
        sent = self.wire.send(messages, tool_choice, anchor, newest, span_end, at, checkpoint)
        self.run.fingerprint = hashlib.sha1((self.run.fingerprint + sent.fingerprint).encode()).hexdigest()
        bills = self.caches.bill(sent, self.clocks.steady, self.clocks.paused)
        for name, bill in bills.items():
            self.run.bills[name].add(bill, output)
        steady = bills["claude"]
        self.run.parts[part].add(steady, output)
        if own is None:
            self.run.ledger.whole("summary calls" if part == "summaries" else part, steady, output)
            return sent.tokens
        f = sent.frame_units
        units = sent.anthropic.units
        mine: set[str] = set()
        for message, is_own in zip(messages, own, strict=True):
            if is_own:
                mine |= self.wire.keys(message)
        read = read_units(sent, steady)
        hit = 0 if read < f else 1 + read - f
        sizes = [sum(u.tokens for u in units[:f]), *(u.tokens for u in units[f:])]
        keys = [u.key for u in units[f:]]
        self.run.ledger.turn(keys, sizes, hit, output, [k in mine for k in keys], steady)
        return sent.tokens


def claude(tokens: int) -> int:
    return math.ceil(tokens * CLAUDE_RATIO)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def touched_paths(call: ToolUse) -> list[str]:
    """The files and folders `call` names by a path input (`PATH_INPUTS`), for the artifact probe:
    the probe's own reading of a call, not the engine's (`context.signals.call_paths` adds the
    path-shaped words of a command line, which no policy but ours is asked to keep)."""
    return [v.strip() for v in (call.input.get(k) for k in PATH_INPUTS) if isinstance(v, str) and v.strip()]


def request_text(history: list[Message]) -> str:
    """Every string the request carries (texts, tool inputs and outputs), as the model reads them."""
    return "\n".join(s for m in history for b in m.content for s in _strings(b.to_json()))


@dataclass
class _State:
    facts: list[Fact] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    last_user: str = ""
    probes: int = 0  # probe points so far
    next_step: str = ""


class Bills(Protocol):
    """What sends a request through some caches and bills it (`_Biller`, or another model's own)."""

    def bill(
        self,
        messages: list[Message],
        output: int,
        part: str,
        anchor: int | None = None,
        own: list[bool] | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> int: ...


# Who bills the summary calls, made from the run, its wire and clocks (None: the main model's caches).
WriterBiller = Callable[[Run, Wire, _Clocks], Bills]


def replay(
    session: Session,
    policy: Policy,
    frame_tokens: int,
    *,
    seed: int = 0,
    writer: WriterBiller | None = None,
    pace: str = "steady",
) -> Run:
    """One run; the policy's `now` is the clock of `pace` (every request is billed at both paces)."""
    assert pace in CLOCKS, pace
    with seeded_ids(f"{session.name}-{seed}-{policy.name}"):
        return _replay(session, policy, frame_tokens, seed, writer, pace)


def replay_paced(
    session: Session,
    make: Callable[[], Policy],
    frame_tokens: int,
    *,
    seed: int = 0,
    writer: WriterBiller | None = None,
) -> Run:
    """The run at the steady pace; for a policy that read the clock, its paused figures from a second
    run of a policy `make` builds afresh, in which `now` is the paused clock (`Run.with_paused`). A
    policy that never read `now` gets nothing else from the replay that differs between the paces,
    so its requests are the same bytes at both (tests/test_bench_paused.py holds this for each)."""
    policy = make()
    run = replay(session, policy, frame_tokens, seed=seed, writer=writer)
    if not policy.read_clock:
        return run
    return run.with_paused(replay(session, make(), frame_tokens, seed=seed, writer=writer, pace="paused"))


def _replay(
    session: Session, policy: Policy, frame_tokens: int, seed: int, writer: WriterBiller | None, pace: str
) -> Run:
    run = Run(policy.name, policy.window, session.name, seed, pace=pace)
    counts, clocks, wire = _Counts(frame_tokens), _Clocks(seed), Wire(policy.frame)
    biller = _Biller(run, counts, clocks, wire)
    summaries: Bills = biller if writer is None else writer(run, wire, clocks)
    history: list[Message] = []
    originals: set[int] = set()
    # The session's own messages made here, kept alive: `originals` holds ids, and a freed message's
    # id may be given to a record made later (counted as the session's own by chance).
    alive: list[Message] = []
    state = _State()
    billed_summaries = 0
    sent = 0
    policy.summary_seconds = _summary_seconds
    for step in session.steps:
        if step.is_user:
            if history and history[-1].role == "assistant":  # the turn ended: the user is to speak
                policy.turn_ended(history)
                billed_summaries = _bill_summaries(run, policy, summaries, billed_summaries)  # (sent now)
            history.append(step.messages[0])
            originals.add(id(step.messages[0]))
            state.last_user, state.next_step = step.messages[0].text, ""  # a new request supersedes the plan
            state.facts += step.facts
            clocks.user()
            continue
        clocks.model()
        policy.now = clocks.paused if pace == "paused" else clocks.steady
        given = history
        awaited = history[-1] if history and history[-1].role == "user" else None
        history = policy.prepare(history)
        cause = edits(given, history)
        size = frame_tokens + sum(counts.tokens(history))
        if claude(size) > policy.window:
            reacted = policy.react(history, claude(size))
            if reacted is not None:
                cause = first(cause, edits(history, reacted))
                history = reacted
                size = frame_tokens + sum(counts.tokens(history))
        billed_summaries = _bill_summaries(run, policy, summaries, billed_summaries)
        if claude(size) > policy.window:
            run.failed_at = sent + 1
            break
        sent += 1
        if awaited is not None and not any(m is awaited for m in history):
            run.unseen += 1
        reply, *results = step.messages
        run.ledger.cause = cause
        own = [id(m) in originals for m in history]
        anchor = policy.anchor(history, originals)
        biller.bill(
            history, counts.tokens([reply])[0], "turns", anchor, own,
            newest=policy.cache_newest(), span_end=policy.cache_span_end(),
            checkpoint=policy.cache_checkpoint(),
        )  # fmt: skip
        run.requests.append(claude(size))
        policy.observe(history, Usage(input_tokens=claude(size)))
        if sent % PROBE_EVERY == 0:
            _probe(run, policy, biller, history, state, anchor)
        for call in reply.tool_uses:
            for path in touched_paths(call):
                if path not in state.paths:
                    state.paths.append(path)
        history.append(reply)
        originals.add(id(reply))
        uses = {u.id: u for u in reply.tool_uses}
        for message in results:
            kept = [
                policy.ingest(uses[r.tool_use_id], r, len(uses)) if isinstance(r, ToolResult) else r
                for r in message.content
            ]
            stored = (
                message
                if all(a is b for a, b in zip(kept, message.content, strict=True))
                else message.replace(kept)
            )
            history.append(stored)
            originals.add(id(stored))
            alive.append(stored)
        state.facts += step.facts
        state.next_step = step.next_step or state.next_step
    run.digests, run.clears, run.idle_clears = policy.digests, policy.clears, policy.idle_clears
    run.wait_seconds = sum(_waited(call) for call in policy.summaries)
    return run


def _summary_seconds(output: str) -> float:
    """How long a summary call with this output runs: the first token, then the output streamed."""
    return SUMMARY_FIRST_TOKEN_S + claude(reference_count(output)) / OUTPUT_TOKENS_PER_S


def _waited(call: SummaryCall) -> float:
    """How long a turn waited on one summary call: all of it when made at the trigger; what was
    left of it at the swap when made ahead (the steady clock since it was sent); none when an
    ahead record was never swapped in."""
    seconds = _summary_seconds(call.output)
    if not call.ahead:
        return seconds
    return 0.0 if call.taken is None else max(seconds - (call.taken - call.started), 0.0)


def _bill_summaries(run: Run, policy: Policy, biller: Bills, done: int) -> int:
    for call in policy.summaries[done:]:
        output = reference_count(call.output)
        size = biller.bill(list(call.messages), output, "summaries", tool_choice=call.tool_choice)
        run.summary_calls += 1
        run.summary_input += claude(size)
        run.summary_output += claude(output)
    return len(policy.summaries)


def own_words(text: str) -> str:
    """`text` without the lines our records carry by code rather than by what the summary wrote: the
    fidelity check's copy of the stated next step (`fidelity.repair`) and a digest's next-step
    section (`record_parts.build_digest`). The continuation probe looks for the next step in what is
    left, so a record passes only by carrying the step itself, for every policy alike."""
    out: list[str] = []
    skip = False
    for line in text.split("\n"):
        if skip:
            skip = False
            continue
        if line.startswith(NEXT_STEP_LINE):
            continue
        if line.strip() == DIGEST_NEXT_STEP:
            skip = True
            continue
        out.append(line)
    return "\n".join(out)


def _probe(
    run: Run, policy: Policy, biller: _Biller, history: list[Message], state: _State, anchor: int | None
) -> None:
    """The probes at one probe point. Recall: a policy with recall asks it about every fact planted
    so far (a model does not know which of them its context lost), each a tool call; a fact that is
    still missing and comes from a file the policy can name (the request or the question names it)
    is read again, as any agent can. The calls and their results are one round trip, billed."""
    text = request_text(history)
    for fact in state.facts:
        if fact.kind == "decision":
            run.probes["decision"].append(fact.text in text)
    probe = state.probes
    state.probes += 1
    facts = [f for f in state.facts if f.kind != "decision"]
    calls: list[ToolUse] = []
    results: list[ToolResult] = []
    passed = [f.text in text for f in facts]
    if policy.remembers:
        for n, fact in enumerate(facts):
            found = policy.recall(fact.asked(probe))
            calls.append(ToolUse(f"recall_{run.recall_calls}", "recall", {"query": fact.asked(probe)}))
            results.append(ToolResult(calls[-1].id, found or "No matching passage."))
            run.recall_calls += 1
            passed[n] = passed[n] or (found is not None and fact.text in found)
    reread: dict[str, str] = {}
    for n, fact in enumerate(facts):
        if not passed[n] and fact.file and (fact.file in text or fact.file in fact.asked(probe)):
            reread[fact.file] = fact.file_text
            passed[n] = fact.text in fact.file_text
    for path, body in reread.items():
        calls.append(ToolUse(f"reread_{run.recall_calls}", "read_file", {"path": path}))
        results.append(ToolResult(calls[-1].id, body))
        run.recall_calls += 1
    run.probes["recall"] += passed
    if calls:  # the round trip: the probed request's reply is the calls, their results one more request
        call = Message("assistant", tuple(calls))
        output = biller.counts.tokens([call])[0]
        for bill in [*run.bills.values(), run.parts["recall"]]:
            bill.output += output
        run.ledger.output("recall", output)
        # (the probed request's marks, its newest now the results, marked: the engine is not asked
        # about a request the history does not go on from)
        biller.bill([*history, call, Message("user", tuple(results))], 0, "recall", anchor)
    if state.paths:
        run.probes["artifact"].append(all(p in text for p in state.paths))
    if state.last_user:
        words = own_words(text)
        run.probes["continuation"].append(
            state.last_user in text and (not state.next_step or state.next_step in words)
        )
