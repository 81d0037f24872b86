"""Sessions (session-runtime.md): the actor and its command union, the turn runner, the storage
port, the registry of live sessions and the sub-agent host (docs/architecture.md).

Submodules are imported directly (``openwork_core.session.actor`` …); the names below are the
package's public surface."""

from __future__ import annotations

from openwork_core.session.commands import SessionCommand, SessionStatus
from openwork_core.session.directory import SessionDirectory
from openwork_core.session.handle import SessionHandle
from openwork_core.session.storage import (
    CompactionStorage,
    OutgoingMessage,
    SessionStorage,
    TurnClosing,
    TurnOpening,
)
from openwork_core.session.turn_accepted import TurnAccepted

__all__ = [
    "CompactionStorage",
    "OutgoingMessage",
    "SessionCommand",
    "SessionDirectory",
    "SessionHandle",
    "SessionStatus",
    "SessionStorage",
    "TurnAccepted",
    "TurnClosing",
    "TurnOpening",
]
