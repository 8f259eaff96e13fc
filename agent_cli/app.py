"""The composition root: builds an AgentSession from settings.

    open_session(settings, env=..., resume=..., ask=...) -> AgentSession

It makes every part (provider, token counter, summary call, context engine,
archive, tools, session log, loop) and hands them over; afterwards the
session changes them only through their own methods. `Assembly` (app_assembly.py)
is how the session gets new parts later (another model, another session), and
makes the first ones too. Nothing here prints or reads the process environment:
the caller passes `env`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_cli.agent.approvals import (
    Approver,
    Asker,
    HeadlessApprover,
    InteractiveApprover,
)
from agent_cli.agent.auto_mode import AutoMode
from agent_cli.agent.claude_rules import SettingsRules
from agent_cli.agent.file_watch import FileWatch
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.modes import ModalApprover, ModeState
from agent_cli.agent.rule_guard import ProjectGuard, RuleGuard
from agent_cli.agent.run_files import protected_paths
from agent_cli.agent.side_events import SideEvents
from agent_cli.agent.skill_trust import skills_to_offer
from agent_cli.agent.subagent import SubAgents
from agent_cli.app_assembly import Assembly, ProviderFactory, model_limits
from agent_cli.app_claude import claude_files, permission_lines
from agent_cli.app_tasks import TaskFactory
from agent_cli.config.claude_settings import PermissionRule
from agent_cli.config.settings import Settings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.protocol import Frame
from agent_cli.core.errors import ConfigError
from agent_cli.core.events import WarningEvent
from agent_cli.core.messages import Message
from agent_cli.core.secret_env import secret_env_values
from agent_cli.extensions import McpExtension, start_mcp_servers
from agent_cli.hooks_user.config import HookSpec, load_hooks
from agent_cli.hooks_user.trust import hooks_to_run
from agent_cli.hooks_user.user_hooks import UserHooks
from agent_cli.mcp_client.config import server_specs
from agent_cli.prompt.instructions import read_project_instructions
from agent_cli.prompt.memories import Memories, user_memory_path, user_section
from agent_cli.prompt.skills import listing, read_skills, skill_dirs
from agent_cli.prompt.system import build_system_prompt
from agent_cli.providers.registry import PROVIDERS
from agent_cli.sandbox.probe import probe_cached
from agent_cli.session import AgentSession
from agent_cli.store.frame_counts import FrameCounts
from agent_cli.store.layout import check_private_dir, ensure_transcripts_dir, transcripts_dir
from agent_cli.store.project_approvals import ProjectApprovals, project_files_run, shell_words
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import continue_candidates, resolve_session_id
from agent_cli.store.signing import SessionSigner
from agent_cli.store.user_dirs import home_dir, state_dir
from agent_cli.tools import process_cap
from agent_cli.tools.background import BackgroundShells
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.confine import Confinement
from agent_cli.tools.registry import default_tools
from agent_cli.tools.skill import SkillTool
from agent_cli.web.hosts import HostPolicy

__all__ = [
    "Assembly",
    "ProviderFactory",
    "model_limits",
    "open_session",
    "secret_env_values",
]

LATEST = ""  # `resume=LATEST`: the session written last (--continue)


def open_session(
    settings: Settings,
    *,
    env: Mapping[str, str],
    resume: str | None = None,
    ask: Asker | None = None,
    make_provider: ProviderFactory | None = None,
    pins: Sequence[str] = (),
) -> AgentSession:
    """A new session, or an earlier one (`resume`: an id or prefix, or LATEST) reopened, with `pins`
    (--pin) beside the ones it had.

    `ask` is the user's answer to an approval question (the REPL's); without it
    the session runs headless: allow-listed commands run, the rest is refused.
    Raises ConfigError for what the user can fix, OSError when `.transcripts/`
    cannot be written.
    """
    pset = settings.provider
    provider_keys = [env.get(entry.api_key_env) for entry in PROVIDERS.values()]
    keys = (pset.api_key, *provider_keys, *secret_env_values(env))
    redactor = Redactor([k for k in keys if k])
    root = settings.project_root
    approvals = ProjectApprovals.for_user(env, root)
    claude = claude_files(root, env, load_hooks(settings.tables))  # Claude Code's settings files
    hook_specs, hook_notices = hooks_to_run(claude.hooks, approvals, ask=ask, yes=settings.approvals.yes)
    run_files = _files_run(root, hook_specs, settings)
    sandbox = _confinement(settings, env, run_files)
    process_cap.configure(settings.sandbox.max_processes)  # pids.max, set when the first command starts
    # The user's commands on the loop's events; a project's (approved) ones in the sandbox when it is on.
    off = "the sandbox is off: --sandbox workspace-write turns it on"
    why = sandbox.reason if sandbox.policy.confined else off
    mode = ModeState(settings.approvals.mode, sandboxed=sandbox.active, unconfined_why=why)
    side = SideEvents()  # what hooks, MCP servers and background tasks tell the loop (agent/side_events.py)
    hooks = UserHooks(
        hook_specs,
        root=root,
        env=env,
        sandbox=sandbox if sandbox.active else None,
        permission_mode=lambda: mode.mode,
        side=side,
    )
    # Background commands' whole logs go to the archive when they end (recall finds them).
    background = BackgroundShells(
        save=lambda label, text: _archived(engine, label, text), spans=redactor.spans
    )
    tools = default_tools(HostPolicy.of(settings.web.allow_hosts, settings.web.deny_hosts), background)
    tasks = SubAgents(settings.tools.max_task_depth, side=side)  # the task tool's sub-agents (app_tasks.py)
    task_tool = tasks.tool(0)
    if task_tool is not None:
        tools.add(task_tool)
    instructions = read_project_instructions(root)
    found = read_skills(root, skill_dirs(root, env))
    skills, skill_notices = skills_to_offer(found, approvals, ask=ask, yes=settings.approvals.yes)
    if skills:
        tools.add(SkillTool({s.name: s.body for s in skills}))
    skill_list, unlisted = listing(skills)
    notices = [*settings.notices, *instructions.notices, *claude.notices, *hook_notices]
    notices += [*found.notices, *skill_notices, *unlisted]
    unconfined_line = sandbox.start_line(yes=settings.approvals.yes)
    if unconfined_line is not None:
        notices.append(unconfined_line)
    system = build_system_prompt(root, instructions=instructions.text, skills=skill_list)
    system += user_section(user_memory_path(env))  # the user's memories (the remember tool)
    signer = SessionSigner.for_user(env)
    if signer.problem:
        notices.append(f"{signer.problem}: this session is not signed, so --continue will pass over it")
    assembly = Assembly(
        settings,
        hooks,
        redactor,
        make_provider,
        lambda: Frame(system, tools.specs()),
        signer=signer,
        ask=ask,
        frames=FrameCounts(state_dir(env) / "frame-counts.json"),
    )
    model = assembly.for_model(pset.model)  # empty: the provider's default, as resolve_model says
    # The servers connect in the background: the prompt (or the first request) does not wait for them
    # here; the session's first turn does (AgentSession.connect), and their tools join then.
    # A project's stdio servers (once approved) run in the sandbox when it is on.
    boxed = sandbox if sandbox.active else None
    servers, mcp_notes = start_mcp_servers(
        settings, env, ask, approvals, wait=False, sandbox=boxed, side=side
    )
    notices.extend(mcp_notes)
    try:
        history: list[Message] = []
        if resume is not None:
            check_private_dir(transcripts_dir(root))  # a planted link or another's folder: one line
            if resume:
                session_id = resolve_session_id(root, resume)
            else:
                session_id, skipped = _latest_signed(root, signer)
                notices.extend(skipped)
            log, history, unread = assembly.reopen(session_id, model.model)
            notices.extend(unread)
        else:
            ensure_transcripts_dir(root)
            signed = model.model
            log = SessionLog.create(
                root, redactor=redactor, meta=lambda session_id: assembly.meta(signed, signed_as=session_id)
            )
        engine = ContextEngine(
            settings=settings.context,
            window=model.window,
            max_output=model.max_output,
            counter=model.counter,
            archive=assembly.archive(log),
            summarize=model.summarize,
            gate=hooks.on_pre_compact,
            price=model.cache_price,
        )
        tool_context = ToolContext(
            root=root,
            allow_outside_root=settings.tools.allow_outside_root,
            bash_timeout=settings.tools.bash_timeout,
            recall=engine.recall,
            recall_project=engine.recall_project,
            remember=Memories(root, user_memory_path(env)).save,
            recall_images=lambda query: engine.archive.images(query),
            secret_spans=redactor.spans,
            sandbox=sandbox if sandbox.active else None,
            save_text=lambda label, text: _archived(engine, label, text),
            images=model.images,
        )
        auto_line = mode.unconfined_notice()  # auto mode where no sandbox confines: said once
        if auto_line is not None:
            notices.append(auto_line)
        watch = FileWatch(root, assembly.snapshots(log), log)  # for /rewind: what the tools change
        rules = claude.settings.rules
        approver = _approver(settings, ask, tools, mode, run_files, sandbox, rules, env)
        loop = AgentLoop(
            provider=model.provider,
            tools=tools,
            context=engine,
            system=system,
            log=log,
            approver=approver,
            tool_context=tool_context,
            hooks=hooks,
            max_iterations=settings.tools.max_iterations,
            retry=assembly.retry,
            redact=redactor.redact,
            history=history,
            summary_model=model.summary_model,
            watch=watch,
            side=side,
        )
        warnings = [WarningEvent(message=n) for n in notices] + ([model.warning] if model.warning else [])
        session = AgentSession(
            settings=settings,
            loop=loop,
            engine=engine,
            log=log,
            parts=assembly,
            model=model,
            warnings=warnings,
            redact=redactor.redact,
            extensions=None if servers is None else McpExtension(settings, servers),
            pins=pins,
            watch=watch,
            mode=mode,
            hook_lines=[_hook_line(h) for h in hook_specs]
            + [f"{_hook_line(h)}  awaiting approval: not run" for h in claude.hooks if h not in hook_specs],
            sandbox_line=sandbox.status(),
            background=background,
            permission_lines=permission_lines(settings, claude.settings),
            tasks=tasks,
        )
        hooks.follow(session)
        tasks.set_maker(
            TaskFactory(
                settings=settings,
                assembly=assembly,
                session=session,
                loop=loop,
                hooks=hooks,
                redactor=redactor,
                approver=approver,
                # where nothing can be asked (a background task): the headless approver of the same rules
                quiet_approver=lambda: _approver(settings, None, tools, mode, run_files, sandbox, rules, env),
            )
        )
    except BaseException:
        if servers is not None:
            servers.close()
        raise
    return session


def _archived(engine: ContextEngine, label: str, text: str) -> str:
    """Save a whole text to the session's archive; the path the model is told."""
    return engine.archive.shown(engine.archive.write_output(label, text))


def _latest_signed(root: Path, signer: SessionSigner) -> tuple[str, list[str]]:
    """The session --continue takes: the last one written that this user signed; and a line about
    the later ones passed over (planted by the repository, or older than signed sessions)."""
    passed: list[str] = []
    for session_id, meta in continue_candidates(root):
        if signer.signed(meta, session_id, root):
            return session_id, [_passed_over(passed)] if passed else []
        passed.append(session_id)
    if passed:
        raise ConfigError(f"no session of yours in {root} to continue: {_passed_over(passed)}")
    raise ConfigError(f"no earlier session in {root} to continue (sessions live in .transcripts/)")


def _passed_over(ids: list[str]) -> str:
    shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
    them = "it" if len(ids) == 1 else "one"
    return (
        f"--continue passed over {len(ids)} unsigned session{'s' if len(ids) > 1 else ''} ({shown}): not "
        f"started by you here, or older than signed sessions; to take {them}, agent --resume ID in the REPL"
    )


def _confinement(settings: Settings, env: Mapping[str, str], run_files: Sequence[Path]) -> Confinement:
    """The session's sandbox (`[sandbox]`, --sandbox); the probe runs only when the mode is on.
    Auto mode's unasked commands get the project's files that run commands read-only (`run_files`:
    the ones the session's hooks and servers run, besides `.git/config`, `.agent/` ...)."""
    conf = settings.sandbox
    root = settings.project_root
    if conf.mode == "off":
        return Confinement.off(root)
    return Confinement.for_session(
        conf.mode,
        root,
        home=home_dir(env),
        state_dir=state_dir(env),
        verdict=probe_cached(env.get("PATH")),
        network=conf.network,
        writable=conf.writable,
        hidden=conf.hidden,
        # and the session store: a command nobody approved rewrites no log (`.transcripts/`)
        protected=[*protected_paths(root), transcripts_dir(root), *run_files],
    )


def _unconfined_asks(guard: RuleGuard, sandbox: Confinement, tools: ToolRegistry) -> RuleGuard:
    """Where the sandbox is wanted but missing, every command is asked: no allow rule or "always"
    answer runs one unconfined (the guard's reason is shown in the question; headless, refused)."""
    if not sandbox.missing:
        return guard
    why = f"no sandbox here ({sandbox.reason}): the command would run unconfined"

    def check(name: str, args: Mapping[str, object]) -> str | None:
        return why if tools.approval(name) == "command" else guard(name, args)

    return check


def _approver(
    settings: Settings,
    ask: Asker | None,
    tools: ToolRegistry,
    mode: ModeState,
    run_files: list[Path],
    sandbox: Confinement,
    rules: Sequence[PermissionRule] = (),
    env: Mapping[str, str] | None = None,
) -> Approver:
    """Claude Code's permission rules first (agent.claude_rules: a deny always wins), then the
    approval mode (agent.modes), then the user's answers, or headless the allow-list; `run_files`
    (the project files hooks and servers run) and the files that run commands ask; every command
    too where the sandbox is wanted but missing."""
    allow = settings.approvals.allow
    web = settings.web.allow_hosts
    project = ProjectGuard(
        settings.project_root, approval_of=tools.approval, effect_of=tools.effect, run_by_extensions=run_files
    )
    auto = AutoMode(
        settings.project_root,
        sandboxed=sandbox.active,
        network=sandbox.policy.network,
        approval_of=tools.approval,
        effect_of=tools.effect,
    )
    guard = auto.guard(_unconfined_asks(project, sandbox, tools), lambda: mode.mode == "auto")
    inner: Approver
    if ask is None:
        inner = HeadlessApprover(allow, approval_of=tools.approval, guard=guard, allow_hosts=web)
    else:
        inner = InteractiveApprover(
            ask, allow, approval_of=tools.approval, guard=guard, sandboxed=sandbox.active, allow_hosts=web
        )
    modal = ModalApprover(
        inner, mode, approval_of=tools.approval, effect_of=tools.effect, guard=guard, auto=auto
    )
    if not rules:
        return modal
    root = settings.project_root
    home = home_dir(env or {})
    return SettingsRules(
        modal, rules, root=root, home=home, ask=ask, guard=guard, mode=mode, approval_of=tools.approval
    )


def _hook_line(hook: HookSpec) -> str:
    """One hook in force, as /status lists it: its event, matcher, command and where it is set."""
    matcher = f" [{hook.matcher}]" if hook.matcher not in ("", "*") else ""
    where = f"  ({hook.where})" if hook.where else ""
    return f"{hook.event}{matcher}: {hook.command}{where}"


def _files_run(root: Path, hooks: Sequence[HookSpec], settings: Settings) -> list[Path]:
    """The project files the session's hooks and (stdio) MCP servers name in their commands."""
    commands = [shell_words(h.command) for h in hooks]
    servers, _ = server_specs(settings.tables, root)
    commands += [[s.command, *s.args] for s in servers if s.command is not None]
    return [root / name for words in commands for name in project_files_run(words, root)]
