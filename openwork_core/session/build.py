"""Building one session's actor and handle from its row (multi-agent.md §1: a sub-agent is built by
the same code; only its surface, approval mode and outcome reporting differ)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from openwork_chat_state.actor import ChatStateActor
from openwork_chat_state.errors import ChatStateError
from openwork_core.agents.definitions import AGENTS
from openwork_core.context.engine import ContextEngine
from openwork_core.context.world_state.capture import WorldStateSources
from openwork_core.ids import SessionId, TurnId
from openwork_core.mcp.surface import SurfaceSource
from openwork_core.session.actor import SessionActor
from openwork_core.session.compaction.generation import SummarySettings
from openwork_core.session.compaction.loading import load_conversation_items
from openwork_core.session.handle import SessionHandle
from openwork_core.session.outcome import TurnOutcome
from openwork_core.session.ownership import SessionLease
from openwork_core.session.runner.context import SessionServices
from openwork_core.session.runner.history import CompactionHistory
from openwork_core.session.runner.steering import SteerStore, write_stranded
from openwork_core.session.runner.world_state_step import WorldStateTracker
from openwork_core.session.storage import SessionRecord, SessionStorage
from openwork_core.session.sub_agent_host import SubAgentHost
from openwork_core.session.toolset import TurnToolset, control_surface
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.update_streams import GlobalUpdates, UpdateHub, sequence_floor
from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import SandboxSettings
from openwork_tools.registry import ToolRegistry, ToolsetConfig

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionDeps:
    """What Core shares with every session it builds."""

    storage_for: Callable[[SessionId, SessionLease], SessionStorage]
    """The storage port of one session, fenced by this daemon's lease on it."""
    steers_for: Callable[[SessionId, SessionLease], SteerStore]
    """The steers of one session (issue 26 point 1), fenced the same way."""
    engine: ContextEngine
    registry: ToolRegistry
    trace: TraceRecorder
    home: Path
    sandbox: SandboxStatus
    skill_root: Path | None
    app_version: str
    summary_settings: SummarySettings
    global_updates: GlobalUpdates
    sandbox_settings: SandboxSettings = field(default_factory=SandboxSettings)
    """The daemon's ``OPENWORK_SANDBOX_*`` settings (network default, command-tree bounds)."""
    observe: Callable[[str, SessionServices], None] | None = None
    """A test seam: sees each session's services as it is built (fault injection into Chat
    State, mailbox waits). Never set by the daemon."""
    mcp: SurfaceSource | None = None
    """The user's MCP servers: a root session's load takes the tools of those ready then."""


def _child_reporter(
    host: SubAgentHost, child_id: SessionId
) -> Callable[[TurnId, TurnOutcome], Awaitable[None]]:
    async def report(turn_id: TurnId, outcome: TurnOutcome) -> None:
        await host.child_finished(child_id, turn_id, outcome)

    return report


async def build_session_handle(
    deps: SessionDeps, record: SessionRecord, host: SubAgentHost, lease: SessionLease
) -> SessionHandle:
    """Load the Conversation, build the Tool Surface and services, spawn the actor. A root gets
    the control tools and the host; a child is non-interactive and reports each Turn's outcome
    to its parent."""
    session_id = record.id
    agent = AGENTS[record.agent]
    storage = deps.storage_for(session_id, lease)
    steers = deps.steers_for(session_id, lease)
    await write_stranded(steers, storage)  # issue 26 point 1: before the Conversation is read
    loaded = await load_conversation_items(storage.compactions, session_id)
    chat = ChatStateActor.spawn()
    try:
        await chat.load(loaded.items, loaded.watermark)
    except ChatStateError:
        await chat.stop()
        raise
    spill_dir = deps.home / "spill" / session_id
    tool_session = ToolSessionContext(
        working_directory=Path(record.working_directory),
        sandbox=deps.sandbox,
        spill_dir=spill_dir,
        protected_roots=tuple(p for p in (deps.home, deps.skill_root) if p is not None),
        secret_dirs=(deps.home,),
        settings=deps.sandbox_settings,
    )
    toolset = TurnToolset.new(
        deps.registry.finalize(ToolsetConfig(agent.tool_ids), tool_session),
        control_surface(record.parent_session_id, host.control.max_active_turns),
        conversation_history=agent.registers_conversation_history,
        mcp=None if deps.mcp is None or record.parent_session_id else deps.mcp.surface(),
    )
    working_directory = Path(record.working_directory)

    def world_state_sources(disabled: frozenset[str], mode: SandboxMode) -> WorldStateSources:
        return WorldStateSources(
            working_directory=working_directory,
            skill_root=deps.skill_root,
            disabled_skill_names=disabled,
            sandbox_mode=mode,
            sandbox=deps.sandbox,
            sandbox_network=deps.sandbox_settings.network_on,
        )

    services = SessionServices(
        storage=storage,
        steers=steers,
        agents=host if record.parent_session_id is None else None,
        interactive=record.parent_session_id is None,
        chat=chat,
        toolset=toolset,
        engine=deps.engine,
        agent=agent,
        spill_dir=spill_dir,
        app_version=deps.app_version,
        world_state=WorldStateTracker(),
        trace=deps.trace,
        compaction_history=CompactionHistory(),
        summary_settings=deps.summary_settings,
        world_state_sources=world_state_sources,
    )
    actor = SessionActor(
        session_id=session_id,
        services=services,
        hub=UpdateHub(session_id, deps.global_updates, sequence_floor(lease.epoch)),
        mode=record.sandbox_mode,
        sandbox=deps.sandbox,
        on_turn_finished=None
        if record.parent_session_id is None
        else _child_reporter(host, session_id),
    )
    if deps.observe is not None:
        deps.observe(session_id, services)
    log.info("session.loaded", session_id=session_id, items=len(loaded.items))
    return actor.spawn()
