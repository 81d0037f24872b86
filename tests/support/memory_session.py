"""One session built by the production ``build_session_handle`` over the in-memory storage port:
fast runner tests with no PostgreSQL (the scripted model, the real tools and Chat State)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from openwork_chat_state.messages import user_text
from openwork_core.agents.control import AgentControl
from openwork_core.context.engine import ContextEngine
from openwork_core.models.adapters.scripted import ScriptedModel
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.session.build import SessionDeps, build_session_handle
from openwork_core.session.compaction.generation import SummarySettings
from openwork_core.session.handle import SessionHandle
from openwork_core.session.input import PreparedTurnInput, input_message
from openwork_core.session.ownership import SessionLease
from openwork_core.session.runner.context import ResolvedModel, SessionServices, TurnSpec
from openwork_core.session.sub_agent_host import SubAgentHost
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.update_streams import GlobalUpdates
from openwork_core.session.updates import SessionUpdateEnvelope, TurnFinished
from openwork_core.storage.memory import InMemorySessionStorage, InMemorySpanSink
from openwork_core.storage.memory_sessions import InMemorySessions
from openwork_core.storage.memory_steers import InMemorySteers
from openwork_core.storage.records import (
    ProviderKind,
    ProviderModel,
    ProviderRecord,
    SessionRecord,
)
from openwork_tools.builtin.registry import builtin_registry
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.registry import ToolRegistry

SESSION_ID = "ses_memory"
MODEL = ProviderModel(name="scripted-model", context_window=200_000, max_output_tokens=8_000)
PROVIDER = ProviderRecord(
    id="default", kind=ProviderKind.OPENAI_CHAT, base_url=None, api_key_env=None, models=(MODEL,)
)


class NoDirectory:
    """A directory with no other session: control tools answer their host's failures."""

    closing = False

    def get(self, session_id: str) -> None:
        return None

    async def load(self, session_id: str) -> SessionHandle:
        raise LookupError(session_id)

    async def close(self, session_id: str) -> None:
        return None

    async def resolve_model(self, record: SessionRecord) -> ResolvedModel:
        raise LookupError(record.id)


@dataclass
class MemorySession:
    handle: SessionHandle
    storage: InMemorySessionStorage
    services: SessionServices
    model: ResolvedModel
    workspace: Path

    def spec(self, turn_id: str, text: str) -> TurnSpec:
        return TurnSpec(
            session_id=self.storage.session_id,
            turn_id=turn_id,
            client_request_id=f"req-{turn_id}",
            input=PreparedTurnInput(messages=(input_message(user_text(text)),)),
            model=self.model,
        )

    async def run_turn(
        self, text: str, *, timeout: float = 20
    ) -> tuple[str, list[SessionUpdateEnvelope]]:
        """Start a turn and collect its updates until ``turn_finished`` (bounded)."""
        turn_id = f"turn-{len(self.storage.turns) + 1}"
        _, subscription = await self.handle.subscribe(None)
        try:
            await self.handle.start_turn(self.spec(turn_id, text))
            seen: list[SessionUpdateEnvelope] = []
            async with asyncio.timeout(timeout):
                while True:
                    envelope = await subscription.queue.get()
                    if envelope.turn_id != turn_id:
                        continue
                    seen.append(envelope)
                    if isinstance(envelope.update, TurnFinished):
                        return turn_id, seen
        finally:
            subscription.close()


@asynccontextmanager
async def memory_session(
    scripted: ScriptedModel, workspace: Path, registry: ToolRegistry | None = None
) -> AsyncIterator[MemorySession]:
    """``registry``: the tools to select from (default: the seven built-ins)."""
    sessions = InMemorySessions()
    seen: dict[str, SessionServices] = {}
    now = datetime.now(UTC)
    record = SessionRecord(
        id=SESSION_ID,
        working_directory=str(workspace),
        agent="default",
        provider_id=PROVIDER.id,
        model_name=MODEL.name,
        sandbox_mode=SandboxMode.AUTO,
        tool_result_pruned_through_sequence=None,
        parent_session_id=None,
        created_at=now,
        updated_at=now,
    )
    storage = sessions.create_session(record)
    deps = SessionDeps(
        storage_for=lambda _sid, _lease: storage,
        steers_for=lambda _sid, _lease: InMemorySteers(),
        engine=ContextEngine(),
        registry=builtin_registry() if registry is None else registry,
        trace=TraceRecorder(InMemorySpanSink()),  # never started: spans are dropped
        home=workspace.parent / "home",
        sandbox=SandboxStatus(available=False, reason="not probed in this test"),
        skill_root=None,
        app_version="test",
        summary_settings=SummarySettings(retry_pause_s=0, attempt_timeout_s=20),
        global_updates=GlobalUpdates(),
        observe=seen.__setitem__,
    )
    host = SubAgentHost(NoDirectory(), sessions, AgentControl.restore(SESSION_ID, []))  # type: ignore[arg-type]  # NoDirectory
    lease = SessionLease(session_id=SESSION_ID, daemon_id="in-memory", epoch=1)
    handle = await build_session_handle(deps, record, host, lease)
    model = ResolvedModel(
        provider=PROVIDER,
        model=MODEL,
        capabilities=ModelCapabilities(context_window_tokens=200_000, max_output_tokens=8_000),
        port=scripted,
    )
    try:
        yield MemorySession(handle, storage, seen[SESSION_ID], model, workspace)
    finally:
        await handle.shutdown()
