"""What a turn runs with: the session's services, this turn's spec, and its live channels."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from openwork_chat_state import ChatStateHandle
from openwork_core.agent import AgentDefinition
from openwork_core.context.engine import ContextEngine
from openwork_core.context.world_state import WorldStateSources
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import ModelPort
from openwork_core.session.compaction import SummarySettings
from openwork_core.session.input import PreparedTurnInput
from openwork_core.session.runner.history import CompactionHistory
from openwork_core.session.runner.permission import PermissionSlot
from openwork_core.session.runner.world_state_step import WorldStateTracker
from openwork_core.session.toolset import TurnToolset
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.updates import SessionUpdate
from openwork_core.storage import PostgresStore
from openwork_core.storage.postgres.compactions import CompactionStore
from openwork_core.storage.postgres.plans import PlanStore
from openwork_core.storage.records import ProviderModel, ProviderRecord
from openwork_tools import SandboxMode


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedModel:
    provider: ProviderRecord
    model: ProviderModel
    capabilities: ModelCapabilities
    port: ModelPort


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSpec:
    session_id: str
    turn_id: str
    client_request_id: str
    input: PreparedTurnInput
    model: ResolvedModel
    disabled_skill_names: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionServices:
    """What every turn of one session uses; owned by the session actor."""

    store: PostgresStore
    plans: PlanStore
    compactions: CompactionStore
    chat: ChatStateHandle
    toolset: TurnToolset
    engine: ContextEngine
    agent: AgentDefinition
    spill_dir: Path | None
    app_version: str
    sandbox_mode: Callable[[], SandboxMode]
    world_state: WorldStateTracker
    world_state_sources: Callable[[frozenset[str]], WorldStateSources]
    trace: TraceRecorder
    compaction_history: CompactionHistory
    summary_settings: SummarySettings = field(default_factory=SummarySettings)
    interactive: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnContext:
    spec: TurnSpec
    services: SessionServices
    emit: Callable[[SessionUpdate], None]
    cancel: asyncio.Event
    permission: PermissionSlot

    @property
    def interactive(self) -> bool:
        return self.services.interactive
