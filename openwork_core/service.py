"""OpenWorkCore: the service facade — a registry of session handles, restart correction,
provider resolution, and every operation the daemon exposes (session-runtime.md §1, §10).

The session runtime (``runtime.py``: the registry and what it builds, the model adapters
and their SDKs) is not imported with this module: ``LazyRegistry`` imports it in a thread at the
first operation that needs a session, or when the daemon's warm-up does; the few names used here
are imported from it after that (docs/performance.md "Start").

Over the 400-line soft limit on purpose: it is the one facade the routes call, a thin method
per daemon operation (docs/architecture.md "Daemon routes")."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import user_text
from openwork_core.agents.definitions import AGENTS
from openwork_core.desktop.queries import DesktopQueries
from openwork_core.forks import SessionForks
from openwork_core.ids import (
    ClientRequestId,
    CompactionId,
    SessionId,
    ToolCallId,
    TurnId,
    new_session_id,
    new_turn_id,
)
from openwork_core.lazy_registry import LazyRegistry
from openwork_core.mcp.config import McpServerConfig
from openwork_core.mcp.runtime import McpRuntime
from openwork_core.mcp.store import McpSecretsFile, secrets_path
from openwork_core.model_switch import ModelSwitch
from openwork_core.models.warnings import ModelWarning, WarningCode
from openwork_core.provider_runtime import KeyUpdate, ProviderRuntime
from openwork_core.reverts import SessionReverts
from openwork_core.session.errors import InvalidWorkspace, UnknownAgent
from openwork_core.session.input import (
    PreparedTurnInput,
    SkillInput,
    UserInput,
    input_message,
    visible_user_message,
)
from openwork_core.session.ownership import (
    DEFAULT_LEASE_SECONDS,
    DaemonIdentity,
    SessionLease,
    in_process_identity,
)
from openwork_core.session.registry_settings import LoadLimits, ModelPortFactory
from openwork_core.session.snapshot import SessionSnapshot, sandbox_view, stored_snapshot
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.turn_accepted import TurnAccepted
from openwork_core.session.turn_views import TurnView, read_turn_view
from openwork_core.session.update_streams import (
    GlobalUpdates,
    SessionReplay,
    Subscription,
    sequence_floor,
)
from openwork_core.session.workspace import is_directory, workspace_refusal
from openwork_core.skills.enablement import SkillEnablement, SkillListing
from openwork_core.skills.selection import select_skills, skill_snapshot_text
from openwork_core.storage.postgres.agents import AgentStore
from openwork_core.storage.postgres.compactions import CompactionStore, TranscriptPage
from openwork_core.storage.postgres.file_changes import FileChangeStore
from openwork_core.storage.postgres.mcp_servers import PostgresMcpServers
from openwork_core.storage.postgres.ownership import PostgresOwnership
from openwork_core.storage.postgres.skills import SkillStatusStore
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.postgres.traces import PostgresSpanSink
from openwork_core.storage.provider_keys import ProviderKeys, keys_path
from openwork_core.storage.records import ProviderRecord, SessionRecord, StoredMessage
from openwork_core.storage.spill_retention import sweep_spill_dirs
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import SandboxSettings

if TYPE_CHECKING:
    from openwork_core.context.inspection import ContextInspection
    from openwork_core.desktop.context_overview import ContextOverview
    from openwork_core.session.approval import PermissionDecision
    from openwork_core.session.compaction.generation import SummarySettings
    from openwork_core.session.compaction.run import CompactionResult
    from openwork_core.session.handle import SessionHandle
    from openwork_core.session.registry import SessionRegistry
    from openwork_core.session.runner.context import ResolvedModel, SessionServices
    from openwork_core.session.runner.steering import SteerAccepted
    from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
    from openwork_core.storage.postgres.steers import PostgresSteers
    from openwork_tools.results import FileChange
    from openwork_tools.undo import ChangeDirection

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePage:
    messages: tuple[StoredMessage, ...]
    has_more: bool
    next_after_sequence: int


class OpenWorkCore:
    """The service facade the daemon's routes call; sessions live in its ``SessionRegistry``."""

    def __init__(
        self,
        *,
        store: PostgresStore,
        home: Path,
        sandbox: SandboxStatus,
        model_ports: ModelPortFactory | None = None,
        app_version: str,
        skill_root: Path | None = None,
        summary_settings: SummarySettings | None = None,
        observe_sessions: Callable[[str, SessionServices], None] | None = None,
        identity: DaemonIdentity | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        load_limits: LoadLimits | None = None,
        sandbox_settings: SandboxSettings | None = None,
        mcp_servers: Mapping[str, McpServerConfig] | None = None,
    ) -> None:
        self._store = store
        self._sandbox = sandbox
        self._sandbox_settings = sandbox_settings or SandboxSettings()
        self._lease_seconds = lease_seconds
        self._ownership = PostgresOwnership(
            store.pool, identity or in_process_identity(home), lease_seconds
        )
        self._renewals: asyncio.Task[None] | None = None
        self._home = home
        self._skill_root = skill_root
        self._global_updates = GlobalUpdates()
        self._trace = TraceRecorder(PostgresSpanSink(store.pool))
        self._skills = SkillEnablement(SkillStatusStore(store.pool), skill_root)
        self._compactions = CompactionStore(store.pool)
        self._file_changes = FileChangeStore(store.pool)
        self._agent_store = AgentStore(store.pool)
        self.providers = ProviderRuntime(store, ProviderKeys(keys_path(home)))
        """Keys, served windows and the session-choice check (issue 14)."""
        self.mcp = McpRuntime(
            store=PostgresMcpServers(store.pool),
            secrets=McpSecretsFile(secrets_path(home)),
            configured=mcp_servers or {},
            sandbox=sandbox,
            daemon_home=home,
            client_version=app_version,
        )
        """The user's MCP servers (issue 27; docs/mcp.md)."""
        self._app_version = app_version
        self._summary_settings = summary_settings
        self._observe_sessions = observe_sessions
        self._model_ports = model_ports
        self._load_limits = load_limits
        self._sessions = LazyRegistry(self._build_registry)
        self.model_switch = ModelSwitch(store, self.providers, self._sessions)
        """``PATCH``'s provider and model, a turn's model (issue 26 point 4)."""
        self.desktop = DesktopQueries(store.pool, home, self._sessions, self._trace)
        """The desktop app's reads and the session lifecycle (issue 16); never loads an actor."""
        self.forks = SessionForks(store, self.desktop)
        """``POST /v1/sessions/{sid}/fork`` (issue 26 point 2)."""
        self.reverts = SessionReverts(store, self._sessions)
        """Revert and unrevert (issue 26 point 3)."""
        self._idle_check_s = max(1.0, min(30.0, (load_limits or LoadLimits()).idle_seconds / 4))

    def _build_registry(self) -> SessionRegistry:
        """Called by ``LazyRegistry`` once the runtime is imported (the one deferred import)."""
        from openwork_core import runtime

        return runtime.SessionRegistry(
            deps=runtime.SessionDeps(
                storage_for=self._session_storage,
                steers_for=self._steers,
                engine=runtime.ContextEngine(),
                registry=runtime.builtin_registry(),
                trace=self._trace,
                home=self._home,
                sandbox=self._sandbox,
                sandbox_settings=self._sandbox_settings,
                skill_root=self._skill_root,
                app_version=self._app_version,
                summary_settings=self._summary_settings or runtime.SummarySettings(),
                global_updates=self._global_updates,
                observe=self._observe_sessions,
                mcp=self.mcp,
            ),
            children=self._agent_store,
            get_provider=self._store.get_provider,
            model_ports=self._model_ports or runtime.model_port_for,
            ownership=self._ownership,
            limits=self._load_limits,
            api_key=self.providers.api_key,
            served_window=self.providers.served_window,
        )

    def _session_storage(
        self, session_id: SessionId, lease: SessionLease
    ) -> PostgresSessionStorage:
        from openwork_core.runtime import PostgresSessionStorage  # the registry's

        return PostgresSessionStorage(self._store.pool, session_id, lease)

    def _steers(self, session_id: SessionId, lease: SessionLease) -> PostgresSteers:
        from openwork_core.runtime import PostgresSteers  # the registry's

        return PostgresSteers(self._store.pool, session_id, lease)

    # -- read-only views the daemon and tests use ----------------------------------------------
    @property
    def sandbox_status(self) -> SandboxStatus:
        """The sandbox verdict of the start (``GET /v1/diagnostics``)."""
        return self._sandbox

    @property
    def store(self) -> PostgresStore:
        return self._store

    @property
    def sessions(self) -> SessionRegistry:
        """The live sessions (the ``SessionDirectory``). Blocking the first time, when it imports
        the session runtime: for tests and benchmarks; the facade's operations await it."""
        return self._sessions.registry_now()

    @property
    def global_updates(self) -> GlobalUpdates:
        return self._global_updates

    @property
    def skills(self) -> SkillEnablement:
        return self._skills

    @property
    def trace(self) -> TraceRecorder:
        return self._trace

    @property
    def home(self) -> Path:
        return self._home

    @property
    def closing(self) -> bool:
        return self._sessions.closing

    # -- lifecycle ---------------------------------------------------------------------------
    async def warm_up(self) -> None:
        """Once the daemon listens: build the session registry (importing the runtime unless the
        warm-up thread already has), so that the first session operation finds it built."""
        await self._sessions.registry()

    async def start(self) -> None:
        """Register this daemon and correct what no live daemon drives any more, before any
        session is served (session-runtime.md §10; never a live daemon's turns)."""
        corrected = await self._ownership.register()
        if corrected:
            log.info("restart.corrected", interrupted_turns=corrected)
        await self._skills.load()
        removed = await asyncio.to_thread(sweep_spill_dirs, self._home / "spill")
        if removed:
            log.info("spill.swept", directories=len(removed))
        self._trace.start()
        self.providers.start()  # in the background: never delays the start
        self.mcp.start()  # likewise
        self._renewals = asyncio.get_running_loop().create_task(
            self._upkeep(), name="session-upkeep"
        )

    async def _upkeep(self) -> None:
        """Periodic work of the daemon (one owned task): heartbeat and lease renewal a third of
        the lease apart (a lease another daemon took stops its actor), and unloading idle
        sessions. A failure is logged and retried at the next beat."""
        renew_every = self._lease_seconds / 3
        tick = min(renew_every, self._idle_check_s)
        last_renewal = last_idle_check = time.monotonic()
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            if now - last_renewal >= renew_every:
                last_renewal = now
                try:
                    registry = self._sessions.built
                    held = {} if registry is None else registry.held_leases()
                    still_ours = await self._ownership.renew()  # the heartbeat, sessions or not
                    if registry is not None:
                        await registry.leases_renewed(still_ours, held)
                except Exception as exc:
                    log.warning("lease.renewal_failed", error=str(exc))
            if now - last_idle_check >= self._idle_check_s:
                last_idle_check = now
                try:
                    if (registry := self._sessions.built) is not None:
                        await registry.unload_idle()
                except Exception as exc:
                    log.warning("sessions.unload_failed", error=str(exc))

    async def stop_sessions(self) -> None:
        """Cancel active turns (outcome cancelled) and stop every actor: each open session stream
        gets its ``stream_ended`` (``unloaded``). Stopping twice is stopping once."""
        await self._sessions.shutdown()

    async def shutdown(self) -> None:
        """Cancel active turns (outcome cancelled), stop every actor, give the leases back."""
        if self._renewals is not None:
            self._renewals.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewals
        await self.providers.close()
        await self.stop_sessions()
        await self.mcp.close()
        try:
            await self._ownership.stop()
        except Exception as exc:  # the leases then expire on their own
            log.warning("lease.release_failed", error=str(exc))
        await self._trace.close()

    # -- sessions ----------------------------------------------------------------------------
    async def create_session(
        self,
        *,
        workspace: str,
        agent: str = "default",
        provider: str | None = "default",
        model: str | None = None,
        permission_mode: SandboxMode = SandboxMode.AUTO,
        provider_named: bool = False,
    ) -> SessionRecord:
        """``provider_named``: the request named its provider; an unknown one (or a model it
        does not list) is refused 400 before anything is written. The implicit ``default`` may
        be configured later (a turn then fails ``no_provider`` until it is)."""
        path = Path(workspace)
        if not path.is_absolute() or not await asyncio.to_thread(is_directory, path):
            raise InvalidWorkspace(f"workspace is not an existing absolute directory: {workspace}")
        refusal = workspace_refusal(await asyncio.to_thread(path.resolve), self._home.resolve())
        if refusal is not None:
            raise InvalidWorkspace(refusal)
        if agent not in AGENTS:
            raise UnknownAgent(f"unknown agent: {agent}")
        if provider is not None and (provider_named or model is not None):
            await self.providers.check_choice(provider, model)
        return await self._store.create_session(
            session_id=new_session_id(),
            working_directory=str(await asyncio.to_thread(path.resolve)),
            agent=agent,
            provider_id=provider,
            model_name=model,
            sandbox_mode=permission_mode,
        )

    async def get_session(self, session_id: SessionId) -> SessionRecord:
        return await self._store.get_session(session_id)

    async def list_sessions(self) -> list[SessionRecord]:
        return await self._store.list_sessions()

    async def _loaded(self, session_id: SessionId) -> SessionHandle:
        """The live handle of an existing session (``RecordNotFound`` otherwise)."""
        await self._store.get_session(session_id)
        return await self._loaded_any(session_id)

    async def _loaded_any(self, session_id: SessionId) -> SessionHandle:
        """The live handle, loading the session (no existence check first: the load's own)."""
        return await (await self._sessions.registry()).load(session_id)

    # -- turns -------------------------------------------------------------------------------
    async def start_turn(
        self,
        session_id: SessionId,
        *,
        client_request_id: ClientRequestId,
        inputs: Sequence[UserInput],
        disabled_skill_names: Sequence[str] = (),
        model_name: str | None = None,
    ) -> TurnAccepted:
        """``model_name``: a model of the session's provider for this turn only (issue 26)."""
        record = await self._store.get_session(session_id)
        known = await self._store.get_turn_by_client_request(session_id, client_request_id)
        if known is not None:  # idempotent from the database, across restarts and daemons
            return TurnAccepted(known.id, client_request_id)
        # the persisted preference plus this request's (skills.md §6: snapshotted at turn start)
        disabled = self._skills.disabled | frozenset(disabled_skill_names)
        prepared = await self._prepared_input(inputs, disabled)
        sessions = await self._sessions.registry()
        model = await sessions.resolve_model(await self.model_switch.for_turn(record, model_name))
        handle = await sessions.load_for_turn(session_id)
        if record.parent_session_id is None:  # multi-agent.md §8, before the user Turn
            await (await sessions.agent_host(session_id)).reconcile(handle)
        from openwork_core.runtime import TurnSpec  # imported: the registry is built

        spec = TurnSpec(
            session_id=session_id,
            turn_id=new_turn_id(),
            client_request_id=client_request_id,
            input=prepared,
            model=model,
            disabled_skill_names=disabled,
        )
        return await handle.start_turn(spec)

    async def _prepared_input(
        self, inputs: Sequence[UserInput], disabled: frozenset[str]
    ) -> PreparedTurnInput:
        """A turn's (or a steer's) user messages: skill snapshots, then the visible message."""
        visible = visible_user_message(tuple(inputs))
        skills = await asyncio.to_thread(
            select_skills,
            self._skill_root,
            disabled,
            [(p.name, p.path) for p in inputs if isinstance(p, SkillInput)],
        )
        snapshots = tuple(
            input_message(user_text(skill_snapshot_text(s)), MessageKind.SKILL_INSTRUCTION)
            for s in skills
        )
        return PreparedTurnInput(messages=(*snapshots, visible))

    async def steer_turn(
        self,
        session_id: SessionId,
        turn_id: TurnId,
        *,
        client_request_id: ClientRequestId,
        inputs: Sequence[UserInput],
    ) -> SteerAccepted:
        """Input for the running turn (issue 26 point 1), committed before the answer."""
        handle = await self._loaded(session_id)
        from openwork_core.runtime import steer_of  # imported: a session is loaded

        prepared = await self._prepared_input(inputs, self._skills.disabled)
        return await handle.steer_turn(steer_of(turn_id, client_request_id, prepared))

    async def resolve_model(self, record: SessionRecord) -> ResolvedModel:
        return await (await self._sessions.registry()).resolve_model(record)

    async def turn_view(self, session_id: SessionId, turn_id: TurnId) -> TurnView:
        """A turn exists from acceptance: running before the runner has written its row."""
        return await read_turn_view(
            self._store, self._sessions.get(session_id), session_id, turn_id
        )

    async def cancel_turn(self, session_id: SessionId, turn_id: TurnId) -> None:
        await (await self._loaded(session_id)).cancel_turn(turn_id)

    async def resolve_permission(
        self,
        session_id: SessionId,
        turn_id: TurnId,
        tool_call_id: ToolCallId,
        decision: PermissionDecision,
    ) -> None:
        await (await self._loaded(session_id)).resolve_permission(turn_id, tool_call_id, decision)

    async def set_permission_mode(self, session_id: SessionId, mode: SandboxMode) -> SessionRecord:
        record = await self._store.get_session(session_id)
        sessions = await self._sessions.registry()
        if record.parent_session_id is not None:
            from openwork_core.runtime import SubAgentModeFixed  # the registry's

            raise SubAgentModeFixed(session_id)
        await (await sessions.load(session_id)).set_permission_mode(mode)
        return await self._store.get_session(session_id)

    async def snapshot(self, session_id: SessionId) -> SessionSnapshot:
        """The live snapshot of a loaded session; otherwise one read from the database (reading
        a session never loads its actor)."""
        handle = self._sessions.get(session_id)
        if handle is not None:
            return await handle.snapshot()
        record = await self._store.get_session(session_id)
        return stored_snapshot(
            record,
            await self._store.get_running_turn(session_id),
            sandbox_view(self._sandbox),
            last_update_sequence=sequence_floor(await self._ownership.last_epoch(session_id) + 1),
        )

    async def subscribe(
        self, session_id: SessionId, after_sequence: int | None
    ) -> tuple[SessionReplay, Subscription]:
        return await (await self._loaded_any(session_id)).subscribe(after_sequence)

    async def list_messages(
        self, session_id: SessionId, *, after_sequence: int, limit: int
    ) -> MessagePage:
        await self._store.get_session(session_id)
        rows = await self._store.list_messages(
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
        self, session_id: SessionId, change_ids: Sequence[str], direction: ChangeDirection
    ) -> tuple[FileChange, ...]:
        """Undo or reapply recorded ``file_change`` artifacts (tools.md §8); idle sessions only."""
        handle = await self._loaded(session_id)
        return await handle.apply_file_changes(tuple(change_ids), direction)

    # -- compaction ----------------------------------------------------------------------------
    async def compact(self, session_id: SessionId) -> CompactionResult:
        """Manual compaction (compaction.md §1): idle only, no pruning."""
        record = await self._store.get_session(session_id)
        model = await self.resolve_model(record)
        result = await (await self._loaded_any(session_id)).compact(model)
        await self.desktop.record_compaction_tokens(session_id, result)
        return result

    async def rewind(self, session_id: SessionId, compaction_id: CompactionId) -> CompactionResult:
        """Install an older checkpoint's projection as a new rewind checkpoint (§8.3)."""
        record = await self._store.get_session(session_id)
        model = await self.resolve_model(record)
        result = await (await self._loaded_any(session_id)).rewind(compaction_id, model)
        await self.desktop.record_compaction_tokens(session_id, result)
        return result

    async def read_transcript(
        self,
        session_id: SessionId,
        *,
        compaction_id: CompactionId | None,
        after_sequence: int,
        limit: int,
    ) -> TranscriptPage:
        """The raw messages a checkpoint covers, paged (§8.4); never synthetic items."""
        await self._store.get_session(session_id)
        return await self._compactions.read_transcript(
            session_id, compaction_id, after_sequence, limit
        )

    # -- inspection --------------------------------------------------------------------------
    async def inspect_context_window(self, session_id: SessionId) -> ContextInspection:
        """The next request's regions through the runner's own prepare, without sampling World
        State and without calling a provider (context-window.md §8)."""
        record = await self._store.get_session(session_id)
        model = await self.resolve_model(record)
        return await (await self._loaded_any(session_id)).inspect_context(model)

    # -- the daemon's facade (routes call only methods of this class) ----------------------------
    async def database_ok(self) -> bool:
        """True when PostgreSQL answers (GET /v1/health)."""
        try:
            await self._store.ping()
        except Exception:
            return False
        return True

    async def list_providers(self) -> list[ProviderRecord]:
        return await self._store.list_providers()

    async def put_provider(
        self, record: ProviderRecord, key: KeyUpdate | None = None
    ) -> ProviderRecord:
        """The row, then the runtime key when the PUT carried one, then a new window probe."""
        return await self.providers.put(record, key)

    async def skill_listing(self) -> SkillListing:
        return await self._skills.listing()

    async def set_skill_disabled(self, name: str, disabled: bool) -> SkillListing:
        return await self._skills.set_disabled(name, disabled)

    async def context_overview(self, session_id: SessionId) -> ContextOverview:
        """The context page's view of the inspection (issue 16 point 4)."""
        from openwork_core.runtime import context_overview  # the registry's

        record = await self._store.get_session(session_id)
        model = await self.resolve_model(record)
        inspection = await (await self._loaded_any(session_id)).inspect_context(model)
        known = list(self.providers.model_warnings(model.provider, model.model))
        latest = (await self.desktop.turns(session_id, None, 1)).turns
        if latest:
            known += (
                ModelWarning(code=WarningCode(w.code), message=w.message)
                for w in await self._store.turn_warnings(latest[0].turn_id)
            )
        return context_overview(
            inspection, provider_id=model.provider.id, model_name=model.model.name, known=known
        )
