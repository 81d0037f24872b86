"""Session errors (session-runtime.md §2), each with a stable code and the spec's text."""

from __future__ import annotations

from typing import ClassVar

from pydantic import JsonValue

from openwork_chat_state.error_root import OpenWorkError
from openwork_core.agents.errors import AgentErrorCode
from openwork_core.agents.errors import UnknownAgent as AgentUnknownAgent
from openwork_core.ids import ToolCallId, TurnId
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.storage.errors import StorageError


class SessionError(OpenWorkError):
    code: ClassVar[str] = "session_error"
    http_status: ClassVar[int] = 400


class ActorStopped(SessionError):
    code = "actor_stopped"
    http_status = 503

    def __init__(self) -> None:
        super().__init__("session actor stopped")


class Busy(SessionError):
    code = "busy"
    http_status = 409

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(f"session already has an active turn: {turn_id}")
        self.turn_id = turn_id

    def envelope_extra(self) -> dict[str, JsonValue]:
        return {"turn_id": self.turn_id}


class TurnNotActive(SessionError):
    code = "turn_not_active"
    http_status = 409

    def __init__(self, turn_id: TurnId, running: TurnId | None = None) -> None:
        """``running``: the session's active turn, named so a client need not guess it (issue
        26 point 1: a steer sent to a turn that already ended)."""
        now = f"; the running turn is {running}" if running is not None else "; no turn is running"
        super().__init__(f"turn is not active: {turn_id}{now}")


class PermissionNotPending(SessionError):
    code = "permission_not_pending"
    http_status = 409

    def __init__(self, tool_call_id: ToolCallId) -> None:
        super().__init__(f"permission request is not pending for tool call: {tool_call_id}")


class EmptyInput(SessionError):
    code = "empty_input"

    def __init__(self) -> None:
        super().__init__("turn input must not be empty")


class ReloadRequired(SessionError):
    code = "reload_required"
    http_status = 409

    def __init__(self) -> None:
        super().__init__(
            "session Conversation checkpoint changed but the in-memory projection could not be "
            "installed; reload the Session"
        )


class TurnNotRecorded(SessionError, StorageError):
    """The turn row and its input could not be committed: nothing was accepted (the 202 of
    ``POST …/turns`` is sent only after that commit); a retry with the same client request id is
    safe."""

    code = "persistence_error"
    http_status = 503

    def __init__(self, detail: str) -> None:
        super().__init__(f"could not write the turn: {detail}")

    @property
    def public_message(self) -> str:
        """The detail is the database's text: it stays in the log (reliability.md)."""
        return "could not write the turn; nothing was accepted (a retry is safe)"


class SessionActive(SessionError):
    """A turn runs, or the actor's own manual compaction or rewind (issue 23 point 7)."""

    code = "session_active"
    http_status = 409

    def __init__(self, running: TurnId | CompactionKind) -> None:
        if isinstance(running, CompactionKind):
            what = "a rewind" if running is CompactionKind.REWIND else f"a {running} compaction"
            super().__init__(f"the session is running {what}; retry when it ends")
        else:
            super().__init__(f"the session has an active turn: {running}")


class NoProvider(SessionError):
    code = "no_provider"


class InvalidWorkspace(SessionError):
    code = "invalid_workspace"


class UnknownAgent(AgentUnknownAgent, SessionError):
    """``POST /v1/sessions`` with an agent that is not defined: the same refusal, and so the same
    code, as ``spawn_agent``'s (multi-agent.md §5); 400 like every session refusal."""

    code = AgentErrorCode.UNKNOWN_AGENT


class ProviderNotFound(SessionError):
    """``POST /v1/sessions`` naming a provider that is not configured (issue 14 point 6)."""

    code = "provider_not_found"

    def __init__(self, provider_id: str) -> None:
        super().__init__(f"unknown model provider: {provider_id[:200]}")


class ModelNotFound(SessionError):
    """``POST /v1/sessions`` naming a model its provider does not list (issue 14 point 6)."""

    code = "model_not_found"

    def __init__(self, provider_id: str, model: str | None, listed: tuple[str, ...]) -> None:
        names = ", ".join(listed[:20]) or "none"
        super().__init__(
            f"provider {provider_id[:200]} has no model {(model or '(default)')[:200]} "
            f"(it lists: {names})"
        )


class InvalidForkPoint(SessionError):
    """``POST …/fork`` with an ``after_sequence`` that is not the end of a finished turn (issue
    26 point 2): a fork is cut at a turn boundary."""

    code = "invalid_fork_point"

    def __init__(self, after: int, ends: tuple[int, ...]) -> None:
        shown = ", ".join(str(e) for e in ends[-10:]) or "none"
        super().__init__(
            f"after_sequence {after} is not the end of a finished turn (0 or one of: {shown})"
        )


class ForkCrossesCompaction(SessionError):
    """A fork whose copied history a compaction checkpoint summarised (issue 26 point 2): the
    raw messages are not what the source sends; fork after a later turn, or rewind first."""

    code = "fork_crosses_compaction"
    http_status = 409

    def __init__(self, after: int) -> None:
        super().__init__(f"a compaction checkpoint covers messages through {after} or earlier")


class RevertCrossesCompaction(SessionError):
    """Issue 26 point 3: a compaction checkpoint summarised messages of the turns to revert;
    ``rewind`` serves that."""

    code = "revert_crosses_compaction"
    http_status = 409

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(
            f"a compaction checkpoint covers turn {turn_id} or a later one; rewind instead"
        )


class TurnAlreadyReverted(SessionError):
    code = "turn_already_reverted"
    http_status = 409

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(f"turn {turn_id} is already reverted")


class UnrevertUnavailable(SessionError):
    """Issue 26 point 3: no revert to put back, or a turn started since the last one."""

    code = "unrevert_unavailable"
    http_status = 409
