"""What a turn runs with: the session's services, this turn's spec, and its live channels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from openwork_chat_state.actor import ChatStateHandle
from openwork_chat_state.item import ConversationItem
from openwork_core.agents.control import TurnSlot
from openwork_core.agents.definitions import AgentDefinition
from openwork_core.agents.mailbox import AgentMailbox
from openwork_core.agents.tools import AgentListEntry
from openwork_core.context.engine import ContextEngine
from openwork_core.context.world_state.capture import WorldStateSources
from openwork_core.ids import ClientRequestId, SessionId, SpanId, TurnId
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import ModelPort
from openwork_core.models.served_window import ServedWindow
from openwork_core.session.compaction.generation import SummarySettings
from openwork_core.session.input import PreparedTurnInput
from openwork_core.session.runner.cancellation import TurnCancellation
from openwork_core.session.runner.history import CompactionHistory
from openwork_core.session.runner.permission import PermissionSlot
from openwork_core.session.runner.steering import SteerInbox, SteerStore
from openwork_core.session.runner.usage_step import CallLedger
from openwork_core.session.runner.world_state_step import WorldStateTracker
from openwork_core.session.storage import ProviderModel, ProviderRecord, SessionStorage
from openwork_core.session.toolset import TurnToolset
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.updates import SessionUpdate
from openwork_tools.modes import SandboxMode


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedModel:
    provider: ProviderRecord
    model: ProviderModel
    capabilities: ModelCapabilities
    port: ModelPort
    served: ServedWindow | None = None
    """What the provider's server said it serves (issue 24: its tool support)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSpec:
    session_id: SessionId
    turn_id: TurnId
    client_request_id: ClientRequestId
    input: PreparedTurnInput
    model: ResolvedModel
    disabled_skill_names: frozenset[str] = frozenset()
    turn_slot: TurnSlot | None = None
    """A sub-agent Turn's share of its root's limit (multi-agent.md §7); the actor returns it
    however the Turn ends."""


@dataclass(slots=True)
class ModelSwitchSlot:
    """A model the session switched to while this turn runs (issue 26 point 4): the actor puts
    it, the runner takes it at the top of its next model call (never within a step)."""

    pending: ResolvedModel | None = None

    def take(self) -> ResolvedModel | None:
        switched, self.pending = self.pending, None
        return switched


class AgentHost(Protocol):
    """What a root session's control tools ask of Core (multi-agent.md §2, §5). Each method raises
    an ``AgentError`` (its ``body`` is the failed tool result); the parent Turn continues."""

    async def spawn(self, task_name: str, message: str, *, spawn_span_id: SpanId | None) -> None:
        """Reserve the name, take a slot, create and start the child; its Turn is running."""
        ...

    async def followup(self, task_name: str, message: str) -> None:
        """Start a new Turn on an idle child."""
        ...

    async def interrupt(self, task_name: str) -> None:
        """Cancel the child's active Turn."""
        ...

    async def list_agents(self) -> tuple[AgentListEntry, ...]:
        """Every child of the root with its status and the start of its latest Turn."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionServices:
    """What every turn of one session uses; owned by the session actor."""

    storage: SessionStorage
    steers: SteerStore
    """The session's steers (issue 26 point 1)."""
    chat: ChatStateHandle
    toolset: TurnToolset
    engine: ContextEngine
    agent: AgentDefinition
    spill_dir: Path | None
    app_version: str
    world_state: WorldStateTracker
    world_state_sources: Callable[[frozenset[str], SandboxMode], WorldStateSources]
    """The World State sources of this session, for a turn's disabled skills and current mode."""
    trace: TraceRecorder
    compaction_history: CompactionHistory
    summary_settings: SummarySettings = field(default_factory=SummarySettings)
    interactive: bool = True
    mailbox: AgentMailbox = field(default_factory=AgentMailbox)
    """Agent messages not yet drained (multi-agent.md §6); in memory only."""
    agents: AgentHost | None = None
    """Root sessions only: the host of their sub-agents."""
    call_ledger: CallLedger = field(default_factory=CallLedger)
    """The previous submission's fingerprint, for the cache diagnostics (issue 14 point 9)."""


@dataclass(slots=True)
class PermissionModeView:
    """The session's permission mode as this turn sees it: the actor hands the current mode to the
    turn at its start and again on every ``SetPermissionMode`` (effective from the next tool
    call, permissions-sandbox.md §1)."""

    current: SandboxMode


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnContext:
    spec: TurnSpec
    services: SessionServices
    emit: Callable[[SessionUpdate], None]
    cancellation: TurnCancellation
    permission: PermissionSlot
    mode: PermissionModeView
    opened: tuple[ConversationItem, ...] = ()
    """The turn's input messages, committed with the turn row before the turn was accepted."""
    steering: SteerInbox = field(default_factory=SteerInbox)
    """Steers the actor accepted for this turn and the runner has not taken yet."""
    next_model: ModelSwitchSlot = field(default_factory=ModelSwitchSlot)
    """The session's model switch this turn has not taken yet."""

    @property
    def interactive(self) -> bool:
        return self.services.interactive
