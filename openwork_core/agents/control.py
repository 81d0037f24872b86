"""AgentControl: one per root session, shared by the root and its children (multi-agent.md §2, §3, §7).

It holds no session handles: the ``SubAgentRegistry`` maps ``task_name`` to a child ``SessionId``
and ``TurnSlots`` counts the active child Turns. A name is reserved before its row is written
(``reserve``), bound once the row exists (``bind``) and released when a spawn fails (``release``).
A ``TurnSlot`` is taken before a child Turn starts and lives in that Turn: ``release`` is
idempotent, so "returned however the Turn ends" is one ``finally: slot.release()``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from openwork_core.agents.errors import (
    AgentLimitReached,
    DuplicateTaskName,
    InvalidTaskName,
    UnknownAgent,
)
from openwork_core.ids import SessionId

DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS = 3
TASK_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,47}$"
TASK_NAME_MAX_CHARS = 48
_TASK_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")


def is_valid_task_name(task_name: str) -> bool:
    """``^[a-z][a-z0-9_]{0,47}$`` (§3): lowercase start, 48 characters at most."""
    return _TASK_NAME.fullmatch(task_name) is not None


def invalid_task_name_text(task_name: str) -> str:
    return f"task name {task_name!r} must match {TASK_NAME_PATTERN}"


def duplicate_task_name_text(task_name: str) -> str:
    return f"a sub-agent named {task_name!r} already exists in this session"


def unknown_agent_text(task_name: str) -> str:
    return f"no sub-agent named {task_name!r} exists in this session"


def agent_limit_text(max_active_turns: int) -> str:
    return (
        f"at most {max_active_turns} sub-agent turns can run at once; "
        "wait for one to finish or continue the work yourself"
    )


class ChildIdentity(Protocol):
    """A persisted child session: its id and its task name (``ChildSessionRecord`` fits)."""

    @property
    def id(self) -> SessionId: ...

    @property
    def task_name(self) -> str: ...


class TurnSlot:
    """One active child Turn's share of the limit; returned exactly once."""

    __slots__ = ("_owner", "_released")

    def __init__(self, owner: TurnSlots) -> None:
        self._owner = owner
        self._released = False

    def release(self) -> bool:
        """Return the slot; ``False`` (and no effect) when it was already returned."""
        if self._released:
            return False
        self._released = True
        self._owner._returned()
        return True


class TurnSlots:
    """The count of concurrently active child Turns of one root (§7); the parent is excluded."""

    __slots__ = ("_active", "_limit")

    def __init__(self, limit: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS) -> None:
        if limit < 1:
            raise ValueError("max_active_turns must be at least 1")
        self._limit = limit
        self._active = 0

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def active(self) -> int:
        return self._active

    def acquire(self) -> TurnSlot:
        """A slot, or ``AgentLimitReached`` when ``limit`` Turns are already active."""
        if self._active >= self._limit:
            raise AgentLimitReached(agent_limit_text(self._limit))
        self._active += 1
        return TurnSlot(self)

    def _returned(self) -> None:
        assert self._active > 0, "a turn slot was returned more often than it was taken"
        self._active -= 1


class AgentControl:
    """The shared state of one root session's sub-agents (§2). Pure and loop-local: every call is
    synchronous, so reserve-then-write has no await between the check and the reservation."""

    __slots__ = ("_bound", "_reserved", "root_session_id", "slots")

    def __init__(
        self, root_session_id: SessionId, max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS
    ) -> None:
        self.root_session_id = root_session_id
        self.slots = TurnSlots(max_active_turns)
        self._reserved: set[str] = set()
        self._bound: dict[str, SessionId] = {}

    @classmethod
    def restore(
        cls,
        root_session_id: SessionId,
        children: Iterable[ChildIdentity],
        max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS,
    ) -> AgentControl:
        """First creation for a root: every persisted child identity, no session started and no
        slot taken (§2)."""
        control = cls(root_session_id, max_active_turns)
        for child in children:
            control._bound[child.task_name] = child.id
        return control

    @property
    def max_active_turns(self) -> int:
        return self.slots.limit

    # -- the registry ----------------------------------------------------------------------
    def reserve(self, task_name: str) -> None:
        """Claim a name before the child row is written; ``InvalidTaskName`` /
        ``DuplicateTaskName`` (a reserved or bound name) otherwise (§3)."""
        if not is_valid_task_name(task_name):
            raise InvalidTaskName(invalid_task_name_text(task_name))
        if task_name in self._reserved or task_name in self._bound:
            raise DuplicateTaskName(duplicate_task_name_text(task_name))
        self._reserved.add(task_name)

    def bind(self, task_name: str, session_id: SessionId) -> None:
        """The reserved name's child row now exists."""
        if task_name not in self._reserved:
            raise KeyError(f"task name {task_name!r} is not reserved")
        self._reserved.discard(task_name)
        self._bound[task_name] = session_id

    def release(self, task_name: str) -> None:
        """Forget a name (failed spawn, deleted turnless child); unknown names are ignored."""
        self._reserved.discard(task_name)
        self._bound.pop(task_name, None)

    def session_of(self, task_name: str) -> SessionId | None:
        """The bound child's session id; ``None`` for a reserved or unknown name."""
        return self._bound.get(task_name)

    def require_session(self, task_name: str) -> SessionId:
        """The bound child's session id, or ``UnknownAgent`` (followup_task, interrupt_agent)."""
        session_id = self._bound.get(task_name)
        if session_id is None:
            raise UnknownAgent(unknown_agent_text(task_name))
        return session_id

    def task_of(self, session_id: SessionId) -> str | None:
        """The task name bound to a child session (a child delivering its outcome)."""
        return next((name for name, sid in self._bound.items() if sid == session_id), None)

    def task_names(self) -> tuple[str, ...]:
        """Bound names, sorted (``list_agents``)."""
        return tuple(sorted(self._bound))
