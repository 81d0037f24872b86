"""Session errors (session-runtime.md §2), each with a stable code and the spec's text."""

from __future__ import annotations

from typing import ClassVar

from openwork_core.ids import ToolCallId, TurnId


class SessionError(Exception):
    code: ClassVar[str] = "session_error"


class ActorStopped(SessionError):
    code = "actor_stopped"

    def __init__(self) -> None:
        super().__init__("session actor stopped")


class Busy(SessionError):
    code = "busy"

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(f"session already has an active turn: {turn_id}")
        self.turn_id = turn_id


class TurnNotActive(SessionError):
    code = "turn_not_active"

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(f"turn is not active: {turn_id}")


class PermissionNotPending(SessionError):
    code = "permission_not_pending"

    def __init__(self, tool_call_id: ToolCallId) -> None:
        super().__init__(f"permission request is not pending for tool call: {tool_call_id}")


class EmptyInput(SessionError):
    code = "empty_input"

    def __init__(self) -> None:
        super().__init__("turn input must not be empty")


class ReloadRequired(SessionError):
    code = "reload_required"

    def __init__(self) -> None:
        super().__init__(
            "session Conversation checkpoint changed but the in-memory projection could not be "
            "installed; reload the Session"
        )


class TurnNotRecorded(SessionError):
    """The turn row and its input could not be committed: nothing was accepted (the 202 of
    ``POST …/turns`` is sent only after that commit); a retry with the same client request id is
    safe."""

    code = "persistence_error"

    def __init__(self, detail: str) -> None:
        super().__init__(f"could not write the turn: {detail}")


class SessionActive(SessionError):
    code = "session_active"

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(f"the session has an active turn: {turn_id}")


class NoProvider(SessionError):
    code = "no_provider"


class InvalidWorkspace(SessionError):
    code = "invalid_workspace"


class UnknownAgent(SessionError):
    code = "unknown_agent"
