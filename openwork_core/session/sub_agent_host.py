"""The sub-agent host of one root session (multi-agent.md §2, §5–§8): Core's side of the control
tools, the children's terminal delivery and restart reconciliation.

One ``SubAgentHost`` per root, created with the root's ``AgentControl`` (restored from the child
rows) and shared by the root and its children. It reaches sessions through a ``SessionDirectory``
and the child rows through ``ChildSessionStorage``; no reference back to the service facade. When
the directory is closing, control tools answer ``agent_host_unavailable``."""

from __future__ import annotations

from typing import assert_never

import structlog

from openwork_chat_state.messages import user_text
from openwork_core.agents.control import AgentControl, TurnSlot
from openwork_core.agents.definitions import EXPLORER_AGENT
from openwork_core.agents.errors import (
    AgentError,
    AgentHostUnavailable,
    AgentInspectionFailed,
    AgentInterruptFailed,
    AgentStartFailed,
    AgentTurnStartFailed,
    DuplicateTaskName,
)
from openwork_core.agents.messages import (
    AgentMessageKind,
    ChildCancelled,
    ChildCompleted,
    ChildFailed,
    ChildOutcome,
    agent_message_id,
    fit_for_delivery,
    terminal_agent_message,
)
from openwork_core.agents.tools import AgentListEntry, agent_status
from openwork_core.context.errors import AgentMessageTooLarge
from openwork_core.ids import (
    MessageId,
    SessionId,
    SpanId,
    TurnId,
    new_agent_request_id,
    new_turn_id,
)
from openwork_core.session.directory import SessionDirectory
from openwork_core.session.errors import ActorStopped, Busy, SessionError, TurnNotActive
from openwork_core.session.handle import SessionHandle
from openwork_core.session.input import PreparedTurnInput, input_message
from openwork_core.session.outcome import Cancelled, Completed, Failed, TurnOutcome
from openwork_core.session.runner.context import TurnSpec
from openwork_core.session.storage import ChildSessionStorage, SessionRecord
from openwork_core.storage.agent_records import ChildTaskNameTaken
from openwork_tools.faults import faultpoint
from openwork_tools.modes import SandboxMode

log = structlog.get_logger(__name__)

EXPLORER_SANDBOX_CEILING = SandboxMode.ACCEPT_EDITS
"""multi-agent.md §4: the explorer role never runs wider than ``accept-edits``."""

HOST_GONE_TEXT = "the sub-agent host is shutting down"


class SubAgentModeFixed(SessionError):
    """``set_permission_mode`` on a sub-agent (permissions-sandbox.md §1)."""

    code = "sub_agent_mode_fixed"
    http_status = 409

    def __init__(self, session_id: SessionId) -> None:
        super().__init__(f"A sub-agent keeps the sandbox mode it was started with: {session_id}")


def narrower_mode(a: SandboxMode, b: SandboxMode) -> SandboxMode:
    """Narrow → wide: ``accept-edits`` < ``auto`` (permissions-sandbox.md §1)."""
    if SandboxMode.ACCEPT_EDITS in (a, b):
        return SandboxMode.ACCEPT_EDITS
    return SandboxMode.AUTO


def child_outcome(outcome: TurnOutcome) -> ChildOutcome:
    match outcome:
        case Completed(final_text=text):
            return ChildCompleted(final_text=text)
        case Failed(code=code, message=message):
            return ChildFailed(error_code=code.value, error_message=message)
        case Cancelled():
            return ChildCancelled()
        case _:
            assert_never(outcome)


class SubAgentHost:
    """``AgentHost`` of one root session (``openwork_core.session.runner.context``)."""

    def __init__(
        self, directory: SessionDirectory, storage: ChildSessionStorage, control: AgentControl
    ) -> None:
        self._directory = directory
        self._storage = storage
        self.control = control
        self._live_interrupts: set[MessageId] = set()
        """Ids of ``interrupted`` messages delivered live in this process (§8 reading)."""

    @property
    def root_session_id(self) -> SessionId:
        return self.control.root_session_id

    def _core(self) -> SessionDirectory:
        if self._directory.closing:
            raise AgentHostUnavailable(HOST_GONE_TEXT)
        return self._directory

    def _live_child_ids(self, core: SessionDirectory) -> list[SessionId]:
        ids = (self.control.session_of(name) for name in self.control.task_names())
        return [sid for sid in ids if sid is not None and core.get(sid) is not None]

    # -- control tools ---------------------------------------------------------------------
    async def spawn(self, task_name: str, message: str, *, spawn_span_id: SpanId | None) -> None:
        core = self._core()
        control = self.control
        control.reserve(task_name)
        slot: TurnSlot | None = None
        child_id: SessionId | None = None
        try:
            slot = control.slots.acquire()
            root = await self._storage.get_session(self.root_session_id)
            parent = core.get(self.root_session_id)
            parent_mode = (
                root.sandbox_mode if parent is None else (await parent.status()).permission_mode
            )
            record = await self._storage.create_child_session(
                parent_session_id=root.id,
                task_name=task_name,
                agent_role=EXPLORER_AGENT.name,
                working_directory=root.working_directory,
                provider_id=root.provider_id,
                model_name=root.model_name,
                sandbox_mode=narrower_mode(parent_mode, EXPLORER_SANDBOX_CEILING),
                spawn_span_id=spawn_span_id,
            )
            child_id = record.id
            control.bind(task_name, record.id)
            faultpoint("sub_agent_spawning")
            await self._start_child_turn(core, record, message, slot)
        except Exception as exc:  # a failed spawn frees its name and its slot (§5)
            control.release(task_name)
            if slot is not None:
                slot.release()
            if child_id is not None:
                await self._discard(core, child_id)
            if isinstance(exc, ChildTaskNameTaken):
                raise DuplicateTaskName(str(exc)) from None
            if isinstance(exc, AgentError):
                raise
            raise AgentStartFailed(f"{type(exc).__name__}: {exc}") from exc
        log.info("sub_agent.spawned", task_name=task_name, child_session_id=child_id)

    async def followup(self, task_name: str, message: str) -> None:
        core = self._core()
        child_id = self.control.require_session(task_name)
        slot = self.control.slots.acquire()
        try:
            handle = await core.load(child_id)
            if await handle.active_turn_id() is not None:
                raise AgentTurnStartFailed(f"sub-agent {task_name!r} is still running")
            record = await self._storage.get_session(child_id)
            await self._start_child_turn(core, record, message, slot)
        except AgentError:
            slot.release()
            raise
        except Busy:
            slot.release()
            raise AgentTurnStartFailed(f"sub-agent {task_name!r} is still running") from None
        except Exception as exc:
            slot.release()
            raise AgentTurnStartFailed(f"{type(exc).__name__}: {exc}") from exc

    async def interrupt(self, task_name: str) -> None:
        core = self._core()
        child_id = self.control.require_session(task_name)
        handle = core.get(child_id)
        turn_id = None if handle is None else await handle.active_turn_id()
        if handle is None or turn_id is None:
            raise AgentInterruptFailed(f"sub-agent {task_name!r} has no active turn")
        try:
            await handle.cancel_turn(turn_id)
        except (TurnNotActive, ActorStopped) as exc:
            raise AgentInterruptFailed(f"sub-agent {task_name!r}: {exc}") from None

    async def list_agents(self) -> tuple[AgentListEntry, ...]:
        core = self._core()
        named = [(n, self.control.session_of(n)) for n in self.control.task_names()]
        children = [(n, sid) for n, sid in named if sid is not None]
        try:
            latest = await self._storage.latest_turns([sid for _, sid in children])
            entries: list[AgentListEntry] = []
            for name, sid in children:
                handle = core.get(sid)
                active = handle is not None and await handle.active_turn_id() is not None
                turn = latest.get(sid)
                entries.append(
                    AgentListEntry(
                        task_name=name,
                        status=agent_status(
                            turn_active=active,
                            last_turn_status=None if turn is None else turn.status,
                        ),
                        started_at=None if turn is None else turn.started_at,
                    )
                )
        except Exception as exc:
            raise AgentInspectionFailed(f"{type(exc).__name__}: {exc}") from exc
        return tuple(entries)

    # -- children ----------------------------------------------------------------------------
    async def _start_child_turn(
        self, core: SessionDirectory, record: SessionRecord, message: str, slot: TurnSlot
    ) -> None:
        """The child's Turn with ``message`` as its user input; the actor owns ``slot`` once it
        accepted the Turn."""
        handle = await core.load(record.id)
        model = await core.resolve_model(record)
        spec = TurnSpec(
            session_id=record.id,
            turn_id=new_turn_id(),
            client_request_id=new_agent_request_id(),
            input=PreparedTurnInput(messages=(input_message(user_text(message)),)),
            model=model,
            turn_slot=slot,
        )
        await handle.start_turn(spec)

    async def _discard(self, core: SessionDirectory, child_id: SessionId) -> None:
        """A spawn that failed after its row was written: close the actor, delete the row."""
        try:
            await core.close(child_id)
            await self._storage.delete_turnless_children(
                self.root_session_id, keep=self._live_child_ids(core)
            )
        except Exception as exc:  # reconciliation removes it before the next user Turn
            log.warning("sub_agent.discard_failed", child_session_id=child_id, error=repr(exc))

    async def child_finished(
        self, child_id: SessionId, turn_id: TurnId, outcome: TurnOutcome
    ) -> None:
        """A child's actor reports its Turn's outcome to the parent's mailbox (§6). A failure
        (parent gone, envelope too large) is a warning; the child's outcome is unchanged."""
        task_name = self.control.task_of(child_id)
        if task_name is None:
            log.warning("agent_message.unknown_child", child_session_id=child_id)
            return
        message = terminal_agent_message(
            child_session_id=child_id,
            child_turn_id=turn_id,
            task_name=task_name,
            outcome=child_outcome(outcome),
        )
        parent = self._directory.get(self.root_session_id)
        if parent is None:
            log.warning("agent_message.parent_gone", message_id=message.id)
            return
        try:
            await parent.deliver_agent_message(fit_for_delivery(message))
        except (AgentMessageTooLarge, ActorStopped) as exc:
            log.warning("agent_message.delivery_failed", message_id=message.id, error=str(exc))
            return
        if message.kind is AgentMessageKind.INTERRUPTED:
            self._live_interrupts.add(message.id)

    # -- restart reconciliation (§8) ---------------------------------------------------------
    async def reconcile(self, parent: SessionHandle) -> None:
        """Before a user Turn of the root: delete turnless orphans and release their names, then
        check and enqueue every terminal child outcome the parent has not stored. Skipped while
        the root has an active Turn (its spawns are in flight; ``start_turn`` answers Busy).
        An oversized message is replaced by its ``failed`` notice (``fit_for_delivery``)."""
        core = self._core()
        if await parent.active_turn_id() is not None:
            return
        plan = await self._storage.reconcile(
            self.root_session_id, live_child_ids=self._live_child_ids(core)
        )
        for gone in plan.deleted:
            self.control.release(gone.task_name)
            await core.close(gone.child_session_id)
        for message in plan.messages:
            if message.kind is AgentMessageKind.FAILED and self._interrupt_reported(message.id):
                continue
            await parent.deliver_agent_message(fit_for_delivery(message))
        if plan.deleted or plan.messages:
            log.info(
                "sub_agents.reconciled",
                deleted=len(plan.deleted),
                messages=len(plan.messages),
            )

    def _interrupt_reported(self, failed_id: MessageId) -> bool:
        """A ``cancelled`` child Turn whose live ``interrupted`` message is still queued is
        reported once, not again as ``failed`` (docs/multi-agent.md reading)."""
        prefix, _, _kind = failed_id.rpartition(":")
        _, _, rest = prefix.partition(":")
        child_id, _, turn_id = rest.partition(":")
        live = agent_message_id(SessionId(child_id), TurnId(turn_id), AgentMessageKind.INTERRUPTED)
        return live in self._live_interrupts
