"""OpenWorkCore: the service facade — a registry of session handles, restart correction,
provider resolution, and every operation the daemon exposes (session-runtime.md §1, §10)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import user_text
from openwork_core.agents import AgentControl
from openwork_core.agents.definitions import AGENTS
from openwork_core.context.builder import SystemContextBuilder
from openwork_core.context.engine import ContextEngine
from openwork_core.context.inspection import ContextInspection, build_context_inspection
from openwork_core.context.limits import ModelContextLimits
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import ModelPort
from openwork_core.session.actor import SessionHandle, TurnAccepted
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.build import SessionDeps, build_session_handle
from openwork_core.session.compaction import (
    CompactionResult,
    SummarySettings,
)
from openwork_core.session.errors import (
    InvalidWorkspace,
    NoProvider,
    ReloadRequired,
    UnknownAgent,
)
from openwork_core.session.input import (
    InputMessage,
    PreparedTurnInput,
    SkillInput,
    UserInput,
    visible_user_message,
)
from openwork_core.session.runner import ResolvedModel, TurnSpec
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.sub_agent_host import SubAgentHost, SubAgentModeFixed
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.turn_views import TurnView, read_turn_view
from openwork_core.session.updates import GlobalUpdates, Replay, Subscription
from openwork_core.skills.enablement import SkillEnablement
from openwork_core.skills.selection import select_skills, skill_snapshot_text
from openwork_core.storage import PostgresStore, RecordNotFound
from openwork_core.storage.postgres.agents import AgentStore
from openwork_core.storage.postgres.compactions import CompactionStore, TranscriptPage
from openwork_core.storage.postgres.file_changes import FileChangeStore
from openwork_core.storage.postgres.plans import PlanStore
from openwork_core.storage.postgres.skills import SkillStatusStore
from openwork_core.storage.records import (
    ProviderRecord,
    SessionRecord,
    StoredMessage,
)
from openwork_core.storage.spill_retention import sweep_spill_dirs
from openwork_tools import (
    FileChange,
    SandboxMode,
    SandboxStatus,
    builtin_registry,
)
from openwork_tools.undo import ChangeDirection

log = structlog.get_logger(__name__)

ModelPortFactory = Callable[[ProviderRecord, str | None], ModelPort]
"""Builds the port for a provider, given the API key read from its environment variable."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePage:
    messages: tuple[StoredMessage, ...]
    has_more: bool
    next_after_sequence: int


class OpenWorkCore:
    def __init__(
        self,
        *,
        store: PostgresStore,
        home: Path,
        sandbox: SandboxStatus,
        model_ports: ModelPortFactory,
        app_version: str,
        skill_root: Path | None = None,
        summary_settings: SummarySettings | None = None,
    ) -> None:
        self.store = store
        self.home = home
        self.sandbox = sandbox
        self.app_version = app_version
        self.skill_root = skill_root
        self.global_updates = GlobalUpdates()
        self._model_ports = model_ports
        self._ports: dict[ProviderRecord, ModelPort] = {}
        self._handles: dict[str, SessionHandle] = {}
        self._load_locks: dict[str, asyncio.Lock] = {}
        self._engine = ContextEngine()
        self._registry = builtin_registry()
        self._closing = False
        self.trace = TraceRecorder(store.pool)
        self._plans = PlanStore(store.pool)
        self._compactions = CompactionStore(store.pool)
        self.agent_store = AgentStore(store.pool)
        self._agent_hosts: dict[str, SubAgentHost] = {}
        self._summary_settings = summary_settings or SummarySettings()
        self.skills = SkillEnablement(SkillStatusStore(store.pool), skill_root)
        self._file_changes = FileChangeStore(store.pool)

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Restart correction before any session is served (session-runtime.md §10)."""
        corrected = await self.store.mark_running_interrupted()
        if corrected:
            log.info("restart.corrected", interrupted_turns=corrected)
        await self.skills.load()
        removed = await asyncio.to_thread(sweep_spill_dirs, self.home / "spill")
        if removed:
            log.info("spill.swept", directories=len(removed))
        self.trace.start()

    async def shutdown(self) -> None:
        """Cancel active turns (outcome cancelled) and stop every actor."""
        self._closing = True
        handles = list(self._handles.values())
        self._handles.clear()
        await asyncio.gather(*(h.shutdown() for h in handles), return_exceptions=True)
        await self.trace.close()

    @property
    def closing(self) -> bool:
        return self._closing

    # -- sessions ----------------------------------------------------------------------------
    async def create_session(
        self,
        *,
        workspace: str,
        agent: str = "default",
        provider: str | None = "default",
        model: str | None = None,
        permission_mode: SandboxMode = SandboxMode.AUTO,
    ) -> SessionRecord:
        path = Path(workspace)
        if not path.is_absolute() or not await asyncio.to_thread(path.is_dir):
            raise InvalidWorkspace(f"workspace is not an existing absolute directory: {workspace}")
        if agent not in AGENTS:
            raise UnknownAgent(f"unknown agent: {agent}")
        return await self.store.create_session(
            session_id=f"ses_{uuid.uuid4().hex}",
            working_directory=str(await asyncio.to_thread(path.resolve)),
            agent=agent,
            provider_id=provider,
            model_name=model,
            sandbox_mode=permission_mode,
        )

    async def get_session(self, session_id: str) -> SessionRecord:
        return await self.store.get_session(session_id)

    async def list_sessions(self) -> list[SessionRecord]:
        return await self.store.list_sessions()

    async def handle(self, session_id: str) -> SessionHandle:
        """The session's live handle, loading it from the database on first use."""
        existing = self._handles.get(session_id)
        if existing is not None and not existing.reload_required:
            return existing
        lock = self._load_locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            existing = self._handles.get(session_id)
            if existing is not None:
                if not existing.reload_required or await existing.active_turn_id() is not None:
                    return existing
                await existing.shutdown()
            handle = await self._load(session_id)
            self._handles[session_id] = handle
            return handle

    def loaded_handle(self, session_id: str) -> SessionHandle | None:
        """The session's live handle when it is loaded; never loads it."""
        return self._handles.get(session_id)

    async def close_session(self, session_id: str) -> None:
        """Stop a loaded session's actor (a deleted sub-agent); unknown ids are ignored."""
        handle = self._handles.pop(session_id, None)
        if handle is not None:
            await handle.shutdown()

    async def agent_host(self, root_session_id: str) -> SubAgentHost:
        """The root's sub-agent host; its ``AgentControl`` is restored from the child rows the
        first time (multi-agent.md §2: no child started, no slot taken)."""
        host = self._agent_hosts.get(root_session_id)
        if host is None:
            children = await self.agent_store.list_children(root_session_id)
            host = self._agent_hosts.get(root_session_id)
            if host is None:
                host = SubAgentHost(self, AgentControl.restore(root_session_id, children))
                self._agent_hosts[root_session_id] = host
        return host

    async def _load(self, session_id: str) -> SessionHandle:
        """``build_session_handle`` (multi-agent.md §1): roots and children alike."""
        with structlog.contextvars.bound_contextvars(session_id=session_id):
            return await self._build(session_id)

    async def _build(self, session_id: str) -> SessionHandle:
        record = await self.store.get_session(session_id)
        host = await self.agent_host(record.parent_session_id or record.id)
        deps = SessionDeps(
            store=self.store,
            plans=self._plans,
            compactions=self._compactions,
            agent_store=self.agent_store,
            engine=self._engine,
            registry=self._registry,
            trace=self.trace,
            home=self.home,
            sandbox=self.sandbox,
            skill_root=self.skill_root,
            app_version=self.app_version,
            summary_settings=self._summary_settings,
            global_updates=self.global_updates,
        )
        return await build_session_handle(deps, record, host)

    # -- turns -------------------------------------------------------------------------------
    async def start_turn(
        self,
        session_id: str,
        *,
        client_request_id: str,
        inputs: Sequence[UserInput],
        disabled_skill_names: Sequence[str] = (),
    ) -> TurnAccepted:
        record = await self.store.get_session(session_id)
        visible = visible_user_message(tuple(inputs))
        # the persisted preference plus this request's (skills.md §6: snapshotted at turn start)
        disabled = self.skills.disabled | frozenset(disabled_skill_names)
        skills = await asyncio.to_thread(
            select_skills,
            self.skill_root,
            disabled,
            [(p.name, p.path) for p in inputs if isinstance(p, SkillInput)],
        )
        snapshots = tuple(
            InputMessage(
                message=user_text(skill_snapshot_text(s)), kind=MessageKind.SKILL_INSTRUCTION
            )
            for s in skills
        )
        prepared = PreparedTurnInput(messages=(*snapshots, visible))
        model = await self.resolve_model(record)
        stale = self._handles.get(session_id)
        if stale is not None and stale.reload_required and await stale.active_turn_id() is None:
            # compaction.md §7: refuse this turn; the next access rebuilds from the database
            self._handles.pop(session_id, None)
            await stale.shutdown()
            raise ReloadRequired()
        handle = await self.handle(session_id)
        if record.parent_session_id is None:  # multi-agent.md §8, before the user Turn
            await (await self.agent_host(session_id)).reconcile(handle)
        spec = TurnSpec(
            session_id=session_id,
            turn_id=f"turn_{uuid.uuid4().hex}",
            client_request_id=client_request_id,
            input=prepared,
            model=model,
            disabled_skill_names=disabled,
        )
        return await handle.start_turn(spec)

    async def resolve_model(self, record: SessionRecord) -> ResolvedModel:
        """The session's provider, model, capabilities and (cached) port; NoProvider otherwise."""
        if record.provider_id is None:
            raise NoProvider("the session has no model provider")
        try:
            provider = await self.store.get_provider(record.provider_id)
        except RecordNotFound as exc:
            raise NoProvider(f"unknown model provider: {record.provider_id}") from exc
        model = provider.model(record.model_name)
        if model is None:
            raise NoProvider(
                f"provider {provider.id} has no model {record.model_name or '(default)'}"
            )
        capabilities = ModelCapabilities(
            context_window_tokens=model.context_window,
            max_output_tokens=model.max_output_tokens,
            max_reasoning_tokens=model.max_reasoning_tokens or None,
            accepts_data_blocks=model.accepts_data_blocks,
        )
        port = self._ports.get(provider)
        if port is None:
            key = os.environ.get(provider.api_key_env) if provider.api_key_env else None
            port = self._model_ports(provider, key)
            self._ports[provider] = port
        return ResolvedModel(provider=provider, model=model, capabilities=capabilities, port=port)

    async def turn_view(self, session_id: str, turn_id: str) -> TurnView:
        """A turn exists from acceptance: running before the runner has written its row."""
        return await read_turn_view(self.store, self._handles.get(session_id), session_id, turn_id)

    async def cancel_turn(self, session_id: str, turn_id: str) -> None:
        await self.store.get_session(session_id)
        handle = await self.handle(session_id)
        await handle.cancel_turn(turn_id)

    async def resolve_permission(
        self, session_id: str, turn_id: str, tool_call_id: str, decision: PermissionDecision
    ) -> None:
        await self.store.get_session(session_id)
        handle = await self.handle(session_id)
        await handle.resolve_permission(turn_id, tool_call_id, decision)

    async def set_permission_mode(self, session_id: str, mode: SandboxMode) -> SessionRecord:
        record = await self.store.get_session(session_id)
        if record.parent_session_id is not None:
            raise SubAgentModeFixed(session_id)
        handle = await self.handle(session_id)
        await handle.set_permission_mode(mode)
        return await self.store.get_session(session_id)

    async def snapshot(self, session_id: str) -> SessionSnapshot:
        return await (await self.handle(session_id)).snapshot()

    async def subscribe(
        self, session_id: str, after_sequence: int | None
    ) -> tuple[Replay, Subscription]:
        return await (await self.handle(session_id)).subscribe(after_sequence)

    async def list_messages(
        self, session_id: str, *, after_sequence: int, limit: int
    ) -> MessagePage:
        await self.store.get_session(session_id)
        rows = await self.store.list_messages(
            session_id, after_sequence=after_sequence, limit=limit + 1
        )
        page = tuple(rows[:limit])
        return MessagePage(
            messages=page,
            has_more=len(rows) > limit,
            next_after_sequence=page[-1].sequence if page else after_sequence,
        )

    # -- file changes ----------------------------------------------------------------------------
    async def apply_file_changes(
        self, session_id: str, change_ids: Sequence[str], direction: ChangeDirection
    ) -> tuple[FileChange, ...]:
        """Undo or reapply recorded ``file_change`` artifacts (tools.md §8); idle sessions only."""
        await self.store.get_session(session_id)
        handle = await self.handle(session_id)
        return await handle.apply_file_changes(self._file_changes, tuple(change_ids), direction)

    # -- compaction ----------------------------------------------------------------------------
    async def compact(self, session_id: str) -> CompactionResult:
        """Manual compaction (compaction.md §1): idle only, no pruning."""
        record = await self.store.get_session(session_id)
        model = await self.resolve_model(record)
        return await (await self.handle(session_id)).compact(model)

    async def rewind(self, session_id: str, compaction_id: str) -> CompactionResult:
        """Install an older checkpoint's projection as a new rewind checkpoint (§8.3)."""
        record = await self.store.get_session(session_id)
        model = await self.resolve_model(record)
        return await (await self.handle(session_id)).rewind(compaction_id, model)

    async def read_transcript(
        self, session_id: str, *, compaction_id: str | None, after_sequence: int, limit: int
    ) -> TranscriptPage:
        """The raw messages a checkpoint covers, paged (§8.4); never synthetic items."""
        await self.store.get_session(session_id)
        return await self._compactions.read_transcript(
            session_id, compaction_id, after_sequence, limit
        )

    # -- inspection --------------------------------------------------------------------------
    async def inspect_context_window(self, session_id: str) -> ContextInspection:
        """The next request's regions through the same ``prepare``, without sampling World State
        and without calling a provider (context-window.md §8)."""
        record = await self.store.get_session(session_id)
        model = await self.resolve_model(record)
        handle = await self.handle(session_id)
        services = handle.services
        system = SystemContextBuilder().build(
            services.agent.system_prompt, services.toolset.system_prompt()
        )
        prepared = self._engine.prepare(
            model=model.model.name,
            capabilities=model.capabilities,
            system=system,
            view=await services.chat.context_view(),
            tools=services.toolset.definitions,
            spill_dir=str(services.spill_dir) if services.spill_dir else None,
        )
        return build_context_inspection(
            prepared, ModelContextLimits.from_capabilities(model.capabilities)
        )
