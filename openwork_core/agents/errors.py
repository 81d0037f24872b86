"""Sub-agent domain errors with stable codes (multi-agent.md §5).

A control tool that fails returns a failed tool result whose body is ``<code>: <message>``
(``error_body``); the parent Turn continues. ``AgentControl`` raises the ``AgentError`` subclass of
the matching code, and the dispatcher turns it into that body with ``exc.body``.
"""

from __future__ import annotations

import enum
from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError


class AgentErrorCode(enum.StrEnum):
    """The domain error codes of multi-agent.md §5, in the spec's order."""

    INVALID_TASK_NAME = "invalid_task_name"
    DUPLICATE_TASK_NAME = "duplicate_task_name"
    UNKNOWN_AGENT = "unknown_agent"
    AGENT_LIMIT_REACHED = "agent_limit_reached"
    AGENT_HOST_UNAVAILABLE = "agent_host_unavailable"
    AGENT_START_FAILED = "agent_start_failed"
    AGENT_TURN_START_FAILED = "agent_turn_start_failed"
    AGENT_INSPECTION_FAILED = "agent_inspection_failed"
    AGENT_INTERRUPT_FAILED = "agent_interrupt_failed"


def error_body(code: AgentErrorCode, message: str) -> str:
    """The failed tool result body ``<code>: <message>`` (§5)."""
    return f"{code.value}: {message}"


class AgentError(OpenWorkError):
    """A control tool's domain failure; ``body`` is the model-visible failed result."""

    code: ClassVar[AgentErrorCode]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def body(self) -> str:
        return error_body(self.code, self.message)


class InvalidTaskName(AgentError):
    code = AgentErrorCode.INVALID_TASK_NAME


class DuplicateTaskName(AgentError):
    code = AgentErrorCode.DUPLICATE_TASK_NAME


class UnknownAgent(AgentError):
    code = AgentErrorCode.UNKNOWN_AGENT


class AgentLimitReached(AgentError):
    code = AgentErrorCode.AGENT_LIMIT_REACHED


class AgentHostUnavailable(AgentError):
    code = AgentErrorCode.AGENT_HOST_UNAVAILABLE


class AgentStartFailed(AgentError):
    code = AgentErrorCode.AGENT_START_FAILED


class AgentTurnStartFailed(AgentError):
    code = AgentErrorCode.AGENT_TURN_START_FAILED


class AgentInspectionFailed(AgentError):
    code = AgentErrorCode.AGENT_INSPECTION_FAILED


class AgentInterruptFailed(AgentError):
    code = AgentErrorCode.AGENT_INTERRUPT_FAILED
