"""AgentSession: one running conversation, and everything a shell may do with it.

The session owns the loop (the working history, the provider, the tools), the
context engine and the session log. The REPL's commands and the headless
runner act only through its methods:

    begin() / end()     the session's start and end, as events (the user's hooks run)
    run(prompt)         one user turn, as events (after the MCP servers still connecting: `connect`)
    connect()           wait for the MCP servers still connecting, saying so; their tools join
    compact(focus)      /compact
    clear()             /clear
    switch_model(name)  /model NAME: provider, window, counter and summary call change together
                        (the summary writer follows unless context.summary_model names one)
    resume(id)          /resume ID: another session of this project, its log and history
    breakdown()         /context
    pin(text) / unpin(n) / pins    /pin, /unpin, /pins: what every request carries word for word
    todos               /todos and the toolbar: the model's todo list (todo_write), back with --continue
    goal / set_goal(spec) / pursue(spec) / clear_goal()   /goal and --goal: the goal every request
                        carries, and its rounds until it is met (agent/goal_run.py), back with --continue
    record() / edit_record(text)   /record, /record edit: the condensed record, seen and replaced
    uncompact()         /uncompact: the last compaction undone, when what it removed fits
    usage_log           /cost (the tasks' calls included; `tasks` holds each task's own)
    tasks               the task tool's sub-agents (agent/subagent.py): /cost's lines, their reports
    redact(text)        what of a text may be stored (the REPL's input history): secrets replaced
    extension_report()  /mcp: the MCP servers, their state and their tools
    hook_lines          /status, /hooks: the user's hooks in force, one line each
    permission_lines    /permissions: the rules in force, each with the file it came from
    changes()           /diff: what the session changed in the files, as diffs
    rewind_points()     /rewind: this session's prompts, numbered from 1, and what each turn changed
    rewind(n, ...)      /rewind N [--chat|--code]: conversation and files back to before prompt N

Nothing reaches into the parts: a change of model or session goes through
their own `reset` methods. What each model needs (provider, counter, summary
call, window) and how a session is reopened come from `Parts` (session_parts.py),
which the composition root (app.py) implements. What the shells only read (ids,
model, window, tools, history, usage, /context) is `SessionView` (session_view.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

from agent_cli.agent.attachments import Attached
from agent_cli.agent.file_watch import FileWatch
from agent_cli.agent.goal_run import TOPIC as GOAL_TOPIC
from agent_cli.agent.goal_run import GoalKeeper, logged_goal, rounds
from agent_cli.agent.history_edits import HistoryEdits
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.modes import ModeState
from agent_cli.agent.record_edits import RecordView, Uncompacted, view_record
from agent_cli.agent.rewind import RewindPoint, Rewound, points
from agent_cli.agent.session_diff import SessionDiff, session_diff
from agent_cli.agent.side_events import Notice
from agent_cli.agent.subagent import SubAgents
from agent_cli.agent.user_runs import UserRuns
from agent_cli.config.settings import Settings
from agent_cli.context.across_runs import finish_run, take_back
from agent_cli.context.engine import ContextEngine
from agent_cli.context.protocol import logged_todos
from agent_cli.core.errors import SessionLogError
from agent_cli.core.events import Event, WarningEvent
from agent_cli.core.goals import Goal, GoalSpec, goal_note
from agent_cli.core.todos import TodoItem
from agent_cli.prompt.pins import Pin, PinBoard, logged_pins, section
from agent_cli.prompt.skills import logged_skills
from agent_cli.session_parts import Extensions, ModelParts, Parts
from agent_cli.session_view import SessionView
from agent_cli.store.log_records import LogRecord, read_log
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import resolve_session_id
from agent_cli.tools.background import TOPIC as BACKGROUND_TOPIC
from agent_cli.tools.background import BackgroundShells, died_notice, running_record
from agent_cli.tools.base import ToolOutput

__all__ = ["AgentSession", "Extensions", "ModelParts", "Parts", "Uncompacted"]


class AgentSession(SessionView):
    def __init__(
        self,
        *,
        settings: Settings,
        loop: AgentLoop,
        engine: ContextEngine,
        log: SessionLog,
        parts: Parts,
        model: ModelParts,
        redact: Callable[[str], str],
        warnings: Sequence[WarningEvent] = (),
        extensions: Extensions | None = None,
        pins: Sequence[str] = (),
        watch: FileWatch | None = None,
        mode: ModeState | None = None,
        hook_lines: Sequence[str] = (),
        sandbox_line: str = "off",
        background: BackgroundShells | None = None,
        permission_lines: Sequence[str] = (),
        tasks: SubAgents | None = None,
    ) -> None:
        self.settings = settings
        self.tasks = tasks or SubAgents(0)  # the task tool's sub-agents (none: no task tool)
        self.background = background or BackgroundShells()  # bash's run_in_background (/ps, /stop)
        self.sandbox_line = sandbox_line  # the sandbox's mode and the probe's verdict (for /status)
        self.hook_lines = tuple(hook_lines)  # the hooks in force, described (for /status)
        self.permission_lines = tuple(permission_lines)  # the rules in force (for /permissions)
        self.mode = mode or ModeState()  # the approval mode (agent.modes): Shift+Tab in the REPL
        self._extensions = extensions
        self._watch = watch  # what the tools change in the files, recorded for /rewind
        self._loop = loop
        self._engine = engine
        self._log = log
        self._parts = parts
        self._model = model
        self._redact = redact
        self._edits = HistoryEdits(loop, engine, settings.project_root)  # /record edit, /uncompact, /rewind
        self._runs = UserRuns(loop, engine)  # `@path`, `!command`, the goal's check: nothing asked
        self.warnings: tuple[WarningEvent, ...] = tuple(warnings)
        records = self._records()
        self._pins = PinBoard(settings.project_root, logged_pins(records))
        if self._pins.notice:  # .agent/pins.md refused (not a file inside, too large): one line
            self.warnings += (WarningEvent(message=self._pins.notice),)
        for text in pins:  # --pin: the session's own, beside what its log had
            self._pins.add(text)
        self._set_pins(logged=list(pins) != [])
        self._goal = GoalKeeper(
            check=self._runs.check,
            usage=lambda: self._loop.usage_log,
            log=lambda data: self._log.log_state(GOAL_TOPIC, data),
            note=self._loop.frame_parts.set_goal_note,
        )
        self._owed = False  # the log says a record is owed (context/across_runs.py)
        self._take_back(records)
        self._background_died(records)

    # ---- what the user does --------------------------------------------------------

    def begin(self, source: str | None = None) -> Iterator[Event]:
        """The session starts (its SessionStart hooks): call once, before the first prompt, and again
        after `resume` switched to another session (`source` "resume")."""
        return self._loop.begin(source or ("resume" if self._loop.history else "startup"))

    def end(self) -> Iterator[Event]:
        """The agent leaves the session: the context's record due is finished or owed, then its
        SessionEnd hooks run. Call once, before close()."""
        yield from self._finish()
        yield from self._loop.end()

    def run(self, prompt: str, attached: Attached | None = None) -> Iterator[Event]:
        """One turn. The files the prompt's `@path` words name go with it (`attached`, or read now,
        with a warning for each that names nothing)."""
        if attached is None:
            attached = self.attachments(prompt)
        if self._goal.active:  # the goal's rounds follow the turn (agent/goal_run.py)
            return rounds(self._goal, self._turn(prompt, attached), self._next_round)
        return self._turn(prompt, attached)

    def awaiting_user(self) -> None:
        """An interactive turn ended and the user is to speak (the REPL, not a one-shot run, which
        ends here): the context may start work in the background now."""
        self._loop.awaiting_user()

    @property
    def goal(self) -> Goal | None:
        """The goal (/goal, --goal): active, or the last one and how it ended; None when never set."""
        return self._goal.goal

    def goal_spent(self) -> float:
        return self._goal.spent()

    def set_goal(self, spec: GoalSpec) -> Goal:
        """Work toward `spec` from the next turn on: its note rides in every request; when a turn
        ends, its check runs and a failed one starts another round."""
        return self._goal.set(spec)

    def pursue(self, spec: GoalSpec) -> Iterator[Event]:
        """`/goal TEXT`: set the goal and start at once, with the goal's note as the prompt."""
        return self.run(goal_note(self.set_goal(spec)), Attached((), ()))

    def clear_goal(self) -> Goal | None:
        """`/goal clear`: the goal ends now; the ended goal, or None when none was active."""
        return self._goal.clear()

    def _next_round(self, prompt: str) -> Iterator[Event]:
        return self._turn(prompt, Attached((), ()))

    def _turn(self, prompt: str, attached: Attached) -> Iterator[Event]:
        yield from self.connect()  # (the turn's tools are those found by then)
        for note in attached.notes:  # (shown before the turn's first event, on the loop's side queue)
            self._loop.side.put(Notice(note))
        yield from self._loop.run(prompt, attached.blocks)

    def connect(self, *, say_waiting: bool = True) -> Iterator[Event]:
        """The MCP servers connect in the background: wait for those still connecting (a line says
        so, unless not `say_waiting`), then a line for each that failed; the tools found join the
        session's. Once."""
        extensions = self._extensions
        if extensions is None:
            return
        waiting = extensions.connecting()
        if waiting and say_waiting:
            names = ", ".join(waiting)
            plural = "s" if len(waiting) > 1 else ""
            yield WarningEvent(message=f"waiting for MCP server{plural} {names} to connect…")
        for line in extensions.join(self._model, self._loop.tools):
            yield WarningEvent(message=line)

    def attachments(self, prompt: str) -> Attached:
        """What the prompt's `@path` words attach: each file read as `read_file` reads it, each
        folder listed, then capped by L0 as a tool's result (archived whole when cut)."""
        return self._runs.attach(prompt, root=self.project_root, images=self._model.images)

    def shell(self, command: str) -> ToolOutput:
        """`!command`: run in the project's shell now, no model and nothing asked (the user typed it);
        what it printed joins the conversation as the user's own message, capped by L0."""
        return self._runs.shell(command)

    def extension_report(self) -> list[str]:
        """`/mcp`: each MCP server, its state and its tools."""
        if self._extensions is None:
            return [
                "no MCP servers configured ([mcp.servers.NAME] in the config, or the project's .mcp.json)"
            ]
        return self._extensions.report()

    def changes(self) -> SessionDiff:
        """`/diff`: every file the session changed, from how it found it to how it is now."""
        return session_diff(self.project_root, self._parts.snapshots(self._log), self._records())

    def compact(self, focus: str | None = None) -> Iterator[Event]:
        return self._loop.compact(focus)

    @property
    def pins(self) -> tuple[Pin, ...]:
        """The pins every request carries, numbered from 1 in this order (the project's first)."""
        return self._pins.pins

    @property
    def todos(self) -> tuple[TodoItem, ...]:
        """The model's todo list (its last todo_write), which every request carries."""
        return self._loop.frame_parts.todos

    def pin(self, text: str, *, project: bool = False) -> Pin | None:
        """Pin `text` from the next request on (and in .agent/pins.md with `project`); None when it
        was pinned already. Raises CommandError for an empty pin or a file that cannot be written."""
        pin = self._pins.add(text, project=project)
        self._set_pins(logged=pin is not None)
        return pin

    def unpin(self, number: int) -> Pin:
        pin = self._pins.remove(number)
        self._set_pins(logged=True)
        return pin

    def record(self) -> RecordView | None:
        """The condensed record now in the context, taken apart; None when there is none."""
        return view_record(self._loop.history, self._records(), writer=self.summary_model)

    def edit_record(self, text: str) -> None:
        """The user's `text` becomes the record, byte for byte; the old one goes to the archive.
        Raises AgentError when there is no record."""
        self._edits.edit_record(text)

    def uncompact(self) -> Uncompacted | None:
        """Undo the last L2/L3/L4 compaction when what it removed fits; None when there is none."""
        return self._edits.uncompact(self._records())

    def cancel(self) -> None:
        self._loop.cancel()

    def clear(self) -> None:
        """Start over with an empty working context; the log keeps everything said so far. Automatic
        compaction and the summarizer start afresh too (the loop guard or latch may have stopped them)."""
        self._loop.clear()
        self._engine.restart()

    def switch_model(self, model: str) -> WarningEvent | None:
        """Talk to `model` from the next request on, with its window, output limit and counter."""
        parts = self._parts.for_model(model)
        self._loop.reset(provider=parts.provider, summary_model=parts.summary_model, images=parts.images)
        self._engine.reset(
            window=parts.window,
            max_output=parts.max_output,
            counter=parts.counter,
            summarize=parts.summarize,
            price=parts.cache_price,
        )
        self._model = parts
        return parts.warning

    def resume(self, prefix: str) -> str:
        """Switch to another session of this project (an id or a unique prefix); its resolved id.
        `warnings` then holds a line for what of its log this version could not read."""
        session_id = resolve_session_id(self.project_root, prefix)
        if session_id == self.id:
            return session_id
        log, history, unread = self._parts.reopen(session_id, self.model)
        self.warnings = tuple(WarningEvent(message=n) for n in unread)  # what /resume says
        self._finish()  # (the session left: a record still due is owed in its log)
        self._log.close()
        self._log = log
        self._loop.reset(history=history, log=log)
        self._engine.reset(
            # The model's own limits: what was learned from errors goes with the old session.
            window=self._model.window,
            max_output=self._model.max_output,
            counter=self._parts.counter(self.model),  # without the old session's anchor
            archive=self._parts.archive(log),
        )
        records = self._records()
        self._pins = PinBoard(self.project_root, logged_pins(records))
        self._set_pins(logged=False)
        self._take_back(records)
        if self._watch is not None:
            self._watch.follow(self._parts.snapshots(log), log)
        return session_id

    def rewind_points(self) -> list[RewindPoint]:
        """This session's prompts, numbered from 1 as its log holds them, each with what its turn changed."""
        return points(self._records())

    def rewind(self, number: int, *, chat: bool = True, code: bool = True) -> Rewound:
        """Go back to just before prompt `number`: the conversation (`chat`) to the history before it,
        and (`code`) every file changed since to how it was then. The rewind is a record in the log,
        with a checkpoint `--resume` replays; nothing is deleted. CommandError for a number no prompt has."""
        snapshots = self._parts.snapshots(self._log)
        return self._edits.rewind(number, chat, code, self._records(), log=self._log, snapshots=snapshots)

    def _background_died(self, records: Sequence[LogRecord]) -> None:
        """Say which background commands an earlier run of this session left when it ended; from
        now on, log which run (`background` state records)."""
        notice = died_notice(records)
        if notice is not None:
            self.warnings += (WarningEvent(message=notice),)
            self._log.log_state(BACKGROUND_TOPIC, running_record([]))
        self.background.watch(lambda states: self._log.log_state(BACKGROUND_TOPIC, running_record(states)))

    def close(self) -> None:
        try:
            with contextlib.suppress(SessionLogError):  # (a log that cannot take it: the digest stays)
                self._finish()  # (after end(), nothing is due; a run cut short owes its record)
            self.tasks.close()  # background tasks stop first (their commands are the session's too)
            self.background.close()  # the session's background commands end with it
            if self._extensions is not None:
                self._extensions.close()
        finally:
            self._log.close()

    # ---- internals ---------------------------------------------------------------

    def _set_pins(self, *, logged: bool) -> None:
        """The pins' section into the system prompt; with `logged`, the session's own into its log."""
        self._loop.edit_frame(lambda parts: parts.set_pinned(section(self._pins.pins)), "pins")
        if logged:
            self._log.log_state("pins", {"pins": self._pins.own()})

    def _records(self) -> list[LogRecord]:
        return read_log(self._log.path)[0]

    def _finish(self) -> list[Event]:
        """The run ends: a record a digest stands in for is swapped in, or owed (context/across_runs.py)."""
        swapped = finish_run(self._engine, self._loop.history, self._loop.frame, self._log, self._owed)
        self._owed = False  # (what is owed now is in the log, and the engine has let it go)
        return list(self._loop.apply(swapped, "finish")) if swapped is not None else []

    def _take_back(self, records: Sequence[LogRecord]) -> None:
        """What the log holds besides the history: the skills in use, the todo list, the goal, the
        record owed, and the counter's anchor; on opening the session and on resuming another."""
        self._loop.edit_frame(lambda parts: parts.restore_skills(logged_skills(records)), "skills")
        self._loop.frame_parts.set_todos(logged_todos(records))
        self._goal.restore(logged_goal(records))
        self._owed = take_back(self._engine, records, self._loop.history, self._loop.frame)
