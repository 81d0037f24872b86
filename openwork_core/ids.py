"""One NewType per id kind and the one function that mints each (DESIGN.md §4: typed values).

Formats are the stored ones: ``<prefix>_<uuid4 hex>`` except compaction checkpoints (a bare
uuid4). Ids that come from outside (HTTP paths and bodies, database rows) are the same strings,
typed once where they enter: a route's path parameter, a request body field, a row decoder."""

from __future__ import annotations

import uuid
from typing import NewType

from openwork_chat_state.ids import CompactionId, MessageId

SessionId = NewType("SessionId", str)
"""A root or child session: ``ses_<hex>``."""

TurnId = NewType("TurnId", str)
"""A Turn, minted when it is accepted: ``turn_<hex>``."""

ClientRequestId = NewType("ClientRequestId", str)
"""The caller's idempotency key of a Turn; a sub-agent's own turns use ``agent_<hex>``."""

ToolCallId = NewType("ToolCallId", str)
"""Our id of one tool call (the provider's call id is kept beside it): ``tc_<hex>``."""

SpanId = NewType("SpanId", str)
"""A trace span: ``span_<hex>``."""

SteerId = NewType("SteerId", str)
"""Input a client added to a running Turn (issue 26 point 1): ``steer_<hex>``."""

DaemonId = NewType("DaemonId", str)
"""A daemon process registered in ``daemons`` (it owns session leases): ``dmn_<hex>``."""


def _hex() -> str:
    return uuid.uuid4().hex


def new_session_id() -> SessionId:
    return SessionId(f"ses_{_hex()}")


def new_turn_id() -> TurnId:
    return TurnId(f"turn_{_hex()}")


def new_agent_request_id() -> ClientRequestId:
    """The client request id of a Turn a parent starts in its child session."""
    return ClientRequestId(f"agent_{_hex()}")


def new_message_id() -> MessageId:
    return MessageId(f"msg_{_hex()}")


def new_tool_call_id() -> ToolCallId:
    return ToolCallId(f"tc_{_hex()}")


def new_span_id() -> SpanId:
    return SpanId(f"span_{_hex()}")


def new_steer_id() -> SteerId:
    return SteerId(f"steer_{_hex()}")


def new_daemon_id() -> DaemonId:
    return DaemonId(f"dmn_{_hex()}")


def new_compaction_id() -> CompactionId:
    return CompactionId(str(uuid.uuid4()))


__all__ = [
    "ClientRequestId",
    "CompactionId",
    "DaemonId",
    "MessageId",
    "SessionId",
    "SpanId",
    "SteerId",
    "ToolCallId",
    "TurnId",
    "new_agent_request_id",
    "new_compaction_id",
    "new_daemon_id",
    "new_message_id",
    "new_session_id",
    "new_span_id",
    "new_steer_id",
    "new_tool_call_id",
    "new_turn_id",
]
